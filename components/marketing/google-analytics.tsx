import Script from "next/script";

/**
 * The optional GA4 tag, only when NEXT_PUBLIC_GA_ID is set; the site renders and measures without it.
 * nonce: this response's (proxy.ts), which the Content-Security-Policy requires of every script.
 */
export function GoogleAnalytics({ nonce }: { nonce?: string }) {
  const id = process.env.NEXT_PUBLIC_GA_ID;
  if (!id || !/^G-[A-Z0-9]+$/.test(id)) return null;
  return (
    <>
      <Script src={`https://www.googletagmanager.com/gtag/js?id=${id}`} strategy="afterInteractive" nonce={nonce} />
      <Script
        id="ga4"
        strategy="afterInteractive"
        nonce={nonce}
      >{`window.dataLayer=window.dataLayer||[];function gtag(){dataLayer.push(arguments);}gtag('js',new Date());gtag('config','${id}');`}</Script>
    </>
  );
}
