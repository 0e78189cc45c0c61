-- Settings operators change in the console (lib/settings): notification channels, the automatic
-- remediation cap, bank details for transfers. The deployment's environment stays the default;
-- a row here overrides it. Secrets (an SMTP URL with its password, a webhook URL whose path is
-- its credential) are stored only as AES-256-GCM ciphertext under a key from the deployment's
-- configuration, and are never read back into a page: exactly one of value / secret is set.
CREATE TABLE "platform_settings" (
    "key"               TEXT NOT NULL,
    "value"             JSONB,
    "secret_ciphertext" TEXT,
    "updated_at"        TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_by"        TEXT NOT NULL,
    CONSTRAINT "platform_settings_pkey" PRIMARY KEY ("key"),
    CONSTRAINT "platform_settings_key_check" CHECK ("key" IN (
        'notifications.smtp_url', 'notifications.email_from', 'notifications.email_to', 'notifications.webhook_url',
        'remediation.cap', 'remediation.window_s', 'billing.bank_details')),
    CONSTRAINT "platform_settings_one_form_check" CHECK (("value" IS NULL) <> ("secret_ciphertext" IS NULL)),
    -- the secret keys are never stored in the clear, the others never encrypted
    CONSTRAINT "platform_settings_secret_check" CHECK (("secret_ciphertext" IS NOT NULL) = ("key" IN ('notifications.smtp_url', 'notifications.webhook_url'))),
    CONSTRAINT "platform_settings_ciphertext_check" CHECK ("secret_ciphertext" IS NULL OR "secret_ciphertext" ~ '^v1:[A-Za-z0-9+/=]+:[A-Za-z0-9+/=]+:[A-Za-z0-9+/=]+$')
);
