import { handleGatewayRequest } from "@/lib/gateway/web-edge";

// A running pod's HTTP port through the inference gateway inside the app:
// ANY /v1/pods/{pod_id}/ports/{port}/{path} with a key of the pod's tenant (lib/gateway).
export const dynamic = "force-dynamic";

export const GET = handleGatewayRequest;
export const POST = handleGatewayRequest;
export const PUT = handleGatewayRequest;
export const PATCH = handleGatewayRequest;
export const DELETE = handleGatewayRequest;
export const HEAD = handleGatewayRequest;
export const OPTIONS = handleGatewayRequest;
