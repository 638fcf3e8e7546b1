// The API key of this browser tab. It lives in sessionStorage (gone when
// the tab closes, never shared with other tabs or sent as a cookie) and
// leaves it only as a Bearer header to this origin (api.ts).

const storageKey = "routeopt.apiKey";

/** storedKey is the signed-in key, or null. Storage may be disabled: then nobody is signed in. */
export function storedKey(): string | null {
  try {
    return sessionStorage.getItem(storageKey);
  } catch {
    return null;
  }
}

/** storeKey keeps key for this tab; false when the browser refuses storage. */
export function storeKey(key: string): boolean {
  try {
    sessionStorage.setItem(storageKey, key);
    return true;
  } catch {
    return false;
  }
}

/** clearKey forgets the key (sign-out, or the API stopped accepting it). */
export function clearKey(): void {
  try {
    sessionStorage.removeItem(storageKey);
  } catch {
    // Nothing stored then.
  }
}

/**
 * keyId is the id the API gives the key (the first 16 hex digits of its
 * SHA-256), so the keys page can mark the key of this session. null where
 * WebCrypto is unavailable (plain http on a host other than localhost).
 */
export async function keyId(key: string): Promise<string | null> {
  if (!globalThis.crypto?.subtle) return null;
  try {
    const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(key));
    return Array.from(new Uint8Array(digest).slice(0, 8), (b) => b.toString(16).padStart(2, "0")).join("");
  } catch {
    return null;
  }
}
