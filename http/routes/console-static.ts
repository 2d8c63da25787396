import express, { type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** Paths the console never answers: the API, Swagger UI and the OpenAPI document keep their own 404s. */
const RESERVED = /^\/(api|docs)(\/|$)/;
/** Vite names every built asset by its content hash: such a file never changes, so a year is safe. */
const HASHED_ASSET = /^\/assets\/[^/]+-[\w-]{8,}\.\w+$/;
const CONTENT_TYPES: Record<string, string> = { js: 'text/javascript; charset=utf-8', css: 'text/css; charset=utf-8', svg: 'image/svg+xml' };
export const IMMUTABLE = 'public, max-age=31536000, immutable';
export const REVALIDATE = 'no-cache';

/**
 * The web console (console/, built by `npm run build` into `dir`) as static files at `/`:
 * - hashed assets under /assets/ are cached for a year (`immutable`); everything else, index.html first, is
 *   `no-cache` (the browser revalidates, so a new build is seen at once);
 * - a GET for a client route (no file extension, the browser asking for HTML) gets index.html (SPA fallback);
 * - /api and /docs are never answered here, so their 404/405 bodies stay JSON;
 * - when the console was never built, `/` says so (503 `console_not_built`) instead of a bare 404;
 * - a hashed script or style goes gzip-compressed (the build's `.gz` copy) to a client that accepts gzip.
 * Returns a handler to mount after the API routes and before the final 404.
 */
export function consoleStatic(dir: string): RequestHandler {
  const index = join(dir, 'index.html');
  const serve = express.static(dir, {
    index: false,
    redirect: false,
    fallthrough: true,
    dotfiles: 'ignore',
    setHeaders: (res) => {
      res.setHeader('Cache-Control', HASHED_ASSET.test((res.req as Request).path) ? IMMUTABLE : REVALIDATE);
      res.setHeader('X-Content-Type-Options', 'nosniff');
    },
  });
  let indexHtml: Buffer | null = null;
  const sendIndex = (res: Response) => {
    // read once per process: a rebuild is picked up on restart (npm start rebuilds when sources changed)
    indexHtml ??= readFileSync(index);
    res.statusCode = 200;
    res.setHeader('Content-Type', 'text/html; charset=utf-8');
    res.setHeader('Cache-Control', REVALIDATE);
    res.setHeader('X-Content-Type-Options', 'nosniff');
    res.setHeader('Content-Length', indexHtml.length);
    res.end(indexHtml);
  };
  // the build's precompressed copies (name.js.gz), read once: hashed files never change
  const compressed = new Map<string, { body: Buffer; type: string } | null>();
  const gzipped = (path: string) => {
    if (!compressed.has(path)) {
      const file = join(dir, `${path}.gz`);
      const type = CONTENT_TYPES[path.slice(path.lastIndexOf('.') + 1)];
      compressed.set(path, type && existsSync(file) ? { body: readFileSync(file), type } : null);
    }
    return compressed.get(path)!;
  };
  return (req: Request, res: Response, next: NextFunction) => {
    if ((req.method !== 'GET' && req.method !== 'HEAD') || RESERVED.test(req.path)) return next();
    if (!existsSync(index)) {
      if (req.path !== '/') return next();
      res.status(503).json({ detail: 'The web console is not built here: run `npm run build` (npm start builds it when stale)', code: 'console_not_built' });
      return;
    }
    if (req.path === '/' || req.path === '/index.html') return sendIndex(res);
    if (HASHED_ASSET.test(req.path) && /\bgzip\b/.test(String(req.headers['accept-encoding'] ?? ''))) {
      const gz = gzipped(req.path);
      if (gz) {
        res.statusCode = 200;
        res.setHeader('Content-Type', gz.type);
        res.setHeader('Content-Encoding', 'gzip');
        res.setHeader('Vary', 'Accept-Encoding');
        res.setHeader('Cache-Control', IMMUTABLE);
        res.setHeader('X-Content-Type-Options', 'nosniff');
        res.setHeader('Content-Length', gz.body.length);
        res.end(req.method === 'HEAD' ? undefined : gz.body);
        return;
      }
    }
    serve(req, res, () => {
      // no such file: a client route (/agents/3) gets the app; a missing asset (/assets/x.js) stays a 404
      const lastSegment = req.path.slice(req.path.lastIndexOf('/') + 1);
      if (!lastSegment.includes('.') && (req.headers.accept ?? '').includes('text/html')) return sendIndex(res);
      next();
    });
  };
}
