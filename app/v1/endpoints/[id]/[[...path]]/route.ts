import { handleGatewayRequest } from "@/lib/gateway/web-edge";

// The inference gateway inside the app: ANY /v1/endpoints/{endpoint_id}/{path} (lib/gateway).
export const dynamic = "force-dynamic";

export const GET = handleGatewayRequest;
export const POST = handleGatewayRequest;
export const PUT = handleGatewayRequest;
export const PATCH = handleGatewayRequest;
export const DELETE = handleGatewayRequest;
export const HEAD = handleGatewayRequest;
export const OPTIONS = handleGatewayRequest;
