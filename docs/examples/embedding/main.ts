// Runs the embedded example: `node dist/docs/examples/embedding/main.js` (PORT, default 8100).
import { createEmbeddedServer } from './service.js';

const server = createEmbeddedServer();
server.listen(Number(process.env.PORT ?? 8100), '127.0.0.1', () => process.stdout.write('embedded service listening\n'));
process.once('SIGTERM', () => server.close(() => process.exit(0)));
