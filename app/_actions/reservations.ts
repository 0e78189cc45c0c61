"use server";
import { z } from "zod";
import { formInt, formText, serverAction } from "@/lib/auth/action";
import { createReservation } from "@/lib/reservations/create-reservation";
import { endReservation } from "@/lib/reservations/end-reservation";
import { extendReservation } from "@/lib/reservations/extend-reservation";
import { createReservationBody, extendReservationBody } from "@/lib/reservations/schemas";

const pages = ["/dashboard/reservations", "/admin/reservations"];
// booking, releasing and extending commit money: tenant admins, as the API's contracts say

export const bookReservationAction = serverAction(
  {
    schema: createReservationBody,
    fromForm: (f) => ({
      gpu_type: formText(f, "gpu_type") ?? "",
      node_count: formInt(f, "node_count"),
      starts_at: formText(f, "starts_at") ?? "",
      ends_at: formText(f, "ends_at") ?? "",
      cluster_id: formText(f, "cluster_id"),
    }),
    access: ["tenant"],
    tenantRole: "tenant_admin",
    revalidate: pages,
  },
  async (actor, input) => {
    const r = await createReservation(actor, input);
    // the form keeps what was booked: its fields as they were sent
    const local = (iso: string) => new Date(iso).toISOString().slice(0, 16);
    return {
      message: `Booked ${r.nodeCount} × ${r.gpuType} node${r.nodeCount === 1 ? "" : "s"}: ${r.nodes.map((n) => n.node.hostname).join(", ")}.`,
      data: {
        id: r.id,
        booked: {
          gpu_type: input.gpu_type,
          node_count: String(input.node_count),
          starts_local: local(input.starts_at),
          ends_local: local(input.ends_at),
          cluster_id: input.cluster_id ?? "",
        },
      },
    };
  },
);

export const endReservationAction = serverAction(
  {
    schema: z.object({ id: z.uuid() }),
    fromForm: (f) => ({ id: formText(f, "id") }),
    access: ["tenant"],
    tenantRole: "tenant_admin",
    revalidate: pages,
  },
  async (actor, { id }) => {
    const r = await endReservation(actor, id);
    return { message: r.status === "cancelled" ? "Cancelled; nothing is billed." : "Released; its nodes are free and billing stopped." };
  },
);

export const extendReservationAction = serverAction(
  {
    schema: extendReservationBody.extend({ id: z.uuid() }),
    fromForm: (f) => ({ id: formText(f, "id"), ends_at: formText(f, "ends_at") ?? "" }),
    access: ["tenant"],
    tenantRole: "tenant_admin",
    revalidate: pages,
  },
  async (actor, { id, ends_at }) => {
    const r = await extendReservation(actor, id, { ends_at });
    return { message: `Extended to ${r.endsAt.toISOString().replace("T", " ").slice(0, 16)} UTC.` };
  },
);
