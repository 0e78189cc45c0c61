export { PageSkeleton as default } from "@/components/shell/page-skeleton";
