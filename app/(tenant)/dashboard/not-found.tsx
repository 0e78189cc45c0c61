import { NotFoundMessage } from "@/components/shell/not-found-message";

/** notFound() anywhere in this plane (an unknown id, another tenant's object): inside the console's shell, with HTTP 404. */
export default function NotFound() {
  return <NotFoundMessage />;
}
