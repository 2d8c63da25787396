/**
 * Agenda's JobRepository contract (test/contracts/job-repository.contract.ts) on `@agendajs/mongo-backend`,
 * the scheduler backend of CALLPLANE_STORAGE=mongodb. On the double the peer repository shares the database
 * object; on a real server it uses a second client, as a second process would.
 */
import { MongoBackend } from '@agendajs/mongo-backend';
import { MongoClient } from 'mongodb';
import { runJobRepositoryContract } from '../../../test/contracts/job-repository.contract.js';
import { describeEachMongoTarget, realMongoUri } from '../../../test/fakes/mongo/mongo-target.js';
import { contractLabel } from './mongo-test-support.js';

describeEachMongoTarget('Agenda JobRepository on @agendajs/mongo-backend', (target) => {
  runJobRepositoryContract(contractLabel(target), async () => {
    const conn = await target.connect();
    const backend = new MongoBackend({ mongo: conn.db, collection: 'agendaJobs' });
    await backend.connect();
    const extra: Array<() => Promise<void>> = [];
    return {
      repo: backend.repository,
      peer: async () => {
        let db = conn.db;
        if (!target.isDouble) {
          const client = await MongoClient.connect(realMongoUri()!, { serverSelectionTimeoutMS: 5000 });
          extra.push(() => client.close());
          db = client.db(conn.db.databaseName);
        }
        const peer = new MongoBackend({ mongo: db, collection: 'agendaJobs' });
        await peer.connect();
        extra.push(() => peer.disconnect());
        return peer.repository;
      },
      cleanup: async () => {
        for (const f of extra.reverse()) await f();
        await backend.disconnect();
        await conn.close();
      },
    };
  });
});
