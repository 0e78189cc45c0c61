-- Pipeline secrets are used only by the roles allowed to (issue 27). A tenant admin writes a
-- secret and says who may reference it in a pipeline: tenant admins only (the default), or every
-- member. A pipeline records whom it acts for — the person, or the service account whose key started
-- it — so a tool call uses a secret only while that owner may still: a demoted or disabled starter's
-- pipelines stop using admin-only secrets at their next call. Operators start pipelines for a
-- tenant without its secrets (operators never handle tenants' credentials).

ALTER TABLE "tenant_secrets" ADD COLUMN "usable_by" TEXT NOT NULL DEFAULT 'tenant_admin',
    ADD CONSTRAINT "tenant_secrets_usable_by_check" CHECK ("usable_by" IN ('tenant_admin', 'tenant_member'));

ALTER TABLE "pipelines" ADD COLUMN "started_by_user_id" UUID, ADD COLUMN "started_by_service_account_id" UUID,
    ADD CONSTRAINT "pipelines_started_by_check" CHECK (num_nonnulls("started_by_user_id", "started_by_service_account_id") <= 1);
ALTER TABLE "pipelines" ADD CONSTRAINT "pipelines_started_by_user_id_fkey"
    FOREIGN KEY ("started_by_user_id") REFERENCES "users"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
ALTER TABLE "pipelines" ADD CONSTRAINT "pipelines_started_by_service_account_id_fkey"
    FOREIGN KEY ("started_by_service_account_id") REFERENCES "service_accounts"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
