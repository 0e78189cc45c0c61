import { z } from "zod";
import { clusterJsonSchema, createClusterBody, listClustersQuery, updateClusterBody } from "@/lib/fleet/cluster-schemas";
import { defineContract } from "@/lib/http/contract";
import { authErrors, conflictError, idParams, listOf, notFoundError } from "./common";

const clusterReply = z.object({ cluster: clusterJsonSchema });

export const createCluster = defineContract({
  operationId: "createCluster",
  method: "POST",
  path: "/api/clusters",
  summary: "Register a cluster",
  tags: ["Fleet"],
  access: ["operator"],
  body: createClusterBody,
  responses: { 201: { description: "Created", schema: clusterReply }, ...authErrors, ...conflictError },
});

export const listClusters = defineContract({
  operationId: "listClusters",
  method: "GET",
  path: "/api/clusters",
  summary: "List clusters (an agent key sees its own cluster)",
  tags: ["Fleet"],
  access: ["operator", "tenant", "agent"],
  query: listClustersQuery,
  responses: { 200: { description: "Clusters", schema: listOf(clusterJsonSchema) }, ...authErrors },
});

export const getCluster = defineContract({
  operationId: "getCluster",
  method: "GET",
  path: "/api/clusters/{id}",
  summary: "Get a cluster",
  tags: ["Fleet"],
  access: ["operator", "tenant", "agent"],
  params: idParams,
  responses: { 200: { description: "The cluster", schema: clusterReply }, ...authErrors, ...notFoundError },
});

export const updateCluster = defineContract({
  operationId: "updateCluster",
  method: "PATCH",
  path: "/api/clusters/{id}",
  summary: "Rename or relabel a cluster",
  tags: ["Fleet"],
  access: ["operator"],
  params: idParams,
  body: updateClusterBody,
  responses: { 200: { description: "Updated", schema: clusterReply }, ...authErrors, ...notFoundError, ...conflictError },
});

export const deleteCluster = defineContract({
  operationId: "deleteCluster",
  method: "DELETE",
  path: "/api/clusters/{id}",
  summary: "Delete an empty cluster",
  tags: ["Fleet"],
  access: ["operator"],
  params: idParams,
  responses: { 204: { description: "Deleted" }, ...authErrors, ...notFoundError, ...conflictError },
});
