export { inngest, inngestEvents } from "@/lib/integrations/inngest";
