import { statement } from "@/lib/db/statement";

// The site analytics' statements (lib/db/statement.ts), checked against the migrated database by
// tests/integration/sql-statements.test.ts. Each counts rows created from $1 (included) to $2.

const within = `created_at >= $1 AND created_at < $2`;

export const SITE_TOTALS = statement("marketing.site-totals", {
  params: ["timestamptz", "timestamptz"],
  columns: { views: "int4", sessions: "int4", demos: "int4", early: "int4" },
  text: `SELECT (SELECT count(*) FROM page_views WHERE ${within})::int AS views,
              (SELECT count(DISTINCT session_hash) FROM page_views WHERE ${within})::int AS sessions,
              (SELECT count(*) FROM demo_requests WHERE ${within})::int AS demos,
              (SELECT count(*) FROM early_access WHERE ${within})::int AS early`,
});

/** Views and visitors per step of $3 seconds. */
export const SITE_VIEWS_BY_STEP = statement("marketing.site-views-by-step", {
  params: ["timestamptz", "timestamptz", "float8"],
  columns: { t: "timestamptz", views: "int4", sessions: "int4" },
  text: `SELECT date_bin(make_interval(secs => $3), created_at, 'epoch'::timestamptz) AS t, count(*)::int AS views, count(DISTINCT session_hash)::int AS sessions
         FROM page_views WHERE ${within} GROUP BY 1 ORDER BY 1`,
});

export const SITE_TOP_PAGES = statement("marketing.site-top-pages", {
  params: ["timestamptz", "timestamptz"],
  columns: { path: "text", views: "int4" },
  text: `SELECT path, count(*)::int AS views FROM page_views WHERE ${within} GROUP BY 1 ORDER BY 2 DESC, 1 LIMIT 10`,
});

export const SITE_REFERRERS = statement("marketing.site-referrers", {
  params: ["timestamptz", "timestamptz"],
  columns: { host: "text", views: "int4" },
  text: `SELECT COALESCE(referrer_host, 'direct') AS host, count(*)::int AS views FROM page_views WHERE ${within} GROUP BY 1 ORDER BY 2 DESC, 1 LIMIT 10`,
});
