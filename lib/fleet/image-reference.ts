// Container image references, as the distribution spec writes them: [registry[:port]/]path[:tag][@digest].
// Pure and dependency-free: the control plane validates images at submit with it, and the node
// agent checks again before it hands one to the container runtime, so a value such as
// "--privileged" or "-v/:/host" can never reach `docker run` as an option.

const domainComponent = "(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])";
const domain = `${domainComponent}(?:\\.${domainComponent})*(?::[0-9]{1,5})?`;
const pathComponent = "[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*";
const tag = "[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}";
const digest = "[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}";

export const IMAGE_REFERENCE = new RegExp(`^(?:${domain}/)?${pathComponent}(?:/${pathComponent})*(?::${tag})?(?:@${digest})?$`);

/** The longest reference we accept (the spec caps the name at 255; tag and digest come on top). */
const IMAGE_REFERENCE_MAX_LENGTH = 500;

export function isImageReference(value: string): boolean {
  return value.length <= IMAGE_REFERENCE_MAX_LENGTH && IMAGE_REFERENCE.test(value);
}
