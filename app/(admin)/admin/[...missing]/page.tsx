import { notFound } from "next/navigation";

/** Any address under this plane that no page serves: the plane's 404, inside its shell (after its sign-in). */
export default function Missing() {
  notFound();
}
