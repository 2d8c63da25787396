/** Identity domain: organizations own everything; a user belongs to exactly one organization. */
export interface Organization {
  id: number;
  name: string;
  createdAt: Date;
}

export interface User {
  id: number;
  organizationId: number;
  email: string;
  name: string | null;
  passwordHash: string;
  createdAt: Date;
}

export interface Session {
  id: number;
  organizationId: number;
  userId: number;
  tokenDigest: string;
  createdAt: Date;
  expiresAt: Date;
  revokedAt: Date | null;
}

export interface ApiKey {
  id: number;
  organizationId: number;
  userId: number;
  name: string;
  keyPrefix: string;
  keyDigest: string;
  createdAt: Date;
  lastUsedAt: Date | null;
  revokedAt: Date | null;
}

/** Who is calling: the result of authenticating a request. */
export interface Principal {
  organizationId: number;
  userId: number;
  via: 'session' | 'api_key';
  sessionId?: number;
  apiKeyId?: number;
}

/** Emails compare case-insensitively and without surrounding blanks. */
export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}
