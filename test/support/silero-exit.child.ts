/**
 * A child process (run from dist/ by adapters/vad/silero-thread.test.ts) that exits with `process.exit(3)` while its
 * Silero inference thread is busy in native code: `loading <ms>` exits that long after the thread was created (while
 * it loads the runtime and the model), `scoring <ms>` exits that long after it became ready, with 64-window batches
 * sent back to back meanwhile. Terminating a worker inside a native onnxruntime call aborts the process (exit status
 * 134, "terminate called ..."); the exit it asked for (3) is the thread's native gate at work.
 */
import { SileroInferenceThread } from '../../adapters/vad/silero-thread.js';
import { SILERO_STATE_LENGTH, defaultSileroModelPath, sileroInputLength } from '../../adapters/vad/silero-session.js';

const [mode, delay] = process.argv.slice(2);
const ms = Number(delay);
const thread = new SileroInferenceThread(defaultSileroModelPath());
if (mode === 'loading') {
  setTimeout(() => process.exit(3), ms);
} else if (mode === 'scoring') {
  if (!(await thread.ready)) {
    process.stderr.write('the inference thread did not start\n');
    process.exit(1);
  }
  const n = 64;
  let batches = 0;
  const input = Float32Array.from({ length: n * sileroInputLength(8000) }, (_, i) => 0.3 * Math.sin(i / 3));
  void (async () => {
    for (;;) {
      await thread.run(8000, n, input.slice(), new Float32Array(n * SILERO_STATE_LENGTH));
      batches++;
    }
  })();
  setTimeout(() => {
    process.stdout.write(`${JSON.stringify({ batches })}\n`);
    process.exit(3);
  }, ms);
} else {
  process.stderr.write(`unknown mode ${mode}\n`);
  process.exit(1);
}
