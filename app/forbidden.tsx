import { ForbiddenMessage } from "@/components/shell/forbidden-message";

export const metadata = { title: "Not allowed" };

export default function Forbidden() {
  // Rendered by forbidden() with HTTP 403: a tenant user in the operator plane, or a member on an admins' page.
  return (
    <main className="flex min-h-screen flex-col items-center justify-center gap-3 px-6 text-center">
      <p className="text-sm font-semibold text-indigo-600">403</p>
      <ForbiddenMessage />
    </main>
  );
}
