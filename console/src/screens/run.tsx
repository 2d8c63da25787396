import { useEffect, useRef, useState } from 'preact/hooks';
import { get, ownUrl } from '../api';
import { ErrorBox, fmtDate, fmtMs, fmtSeconds, fmtUsd, Loading, Section, useLoad } from '../ui';
import { GraphView } from './graph';

interface Turn {
  role: string;
  text: string;
  node_id?: string;
  start_ms: number;
  end_ms: number;
  interrupted?: boolean;
}

/** A run: the transcript beside the recording (click a turn to seek), node path, context, latency, cost. */
export function RunPage({ workflowId, id }: { workflowId: number; id: number }) {
  const run = useLoad(() => get(`/workflow/${workflowId}/runs/${id}`), [workflowId, id]);
  const r = run.data;
  const definition = useLoad(async () => {
    if (!r) return null;
    const v = await get<{ versions: any[] }>(`/workflow/${workflowId}/versions`);
    return v.versions.find((x) => x.id === r.definition_id)?.workflow_definition ?? null;
  }, [r?.definition_id]);
  const transcript = useLoad(async () => {
    if (!r?.transcript_url) return null;
    const res = await fetch(ownUrl(r.transcript_url));
    if (!res.ok) throw new Error(`The transcript could not be loaded (HTTP ${res.status})`);
    return (await res.json()) as { turns: Turn[] };
  }, [r?.transcript_url]);
  // the player streams the recording from its signed link, asking byte ranges as it seeks (click a turn). Every
  // read of the run signs a new link: the player keeps the one it started with (a new src restarts playback) until
  // that one fails (it expires after 3600 s), then plays on from the same position with the run's current link
  const recordingPath = r?.recording_url ? new URL(r.recording_url, location.href).pathname : null;
  const [recordingSrc, setRecordingSrc] = useState<string | null>(null);
  const [recordingError, setRecordingError] = useState<Error | null>(null);
  const resumeAt = useRef<number | null>(null);
  useEffect(() => {
    setRecordingSrc(r?.recording_url ? ownUrl(r.recording_url) : null);
    setRecordingError(null);
    resumeAt.current = null;
  }, [recordingPath]);
  const audio = useRef<HTMLAudioElement>(null);
  const onRecordingError = async () => {
    const failed = () => setRecordingError(new Error('The recording could not be played (its link may have expired or the file is gone)'));
    if (resumeAt.current !== null) return failed(); // the fresh link failed too
    resumeAt.current = audio.current?.currentTime ?? 0;
    const fresh = await get<{ recording_url?: string | null }>(`/workflow/${workflowId}/runs/${id}`).catch(() => null);
    if (fresh?.recording_url) setRecordingSrc(ownUrl(fresh.recording_url));
    else failed();
  };
  const onRecordingLoaded = (a: HTMLAudioElement) => {
    if (resumeAt.current === null) return;
    a.currentTime = resumeAt.current;
    resumeAt.current = null;
  };
  const [now, setNow] = useState(0);
  useEffect(() => {
    if (!r || r.is_completed) return;
    const t = setInterval(run.reload, 2000);
    return () => clearInterval(t);
  }, [r?.is_completed]);
  if (!r) {
    return (
      <>
        <Loading when={run.loading} />
        <ErrorBox error={run.error} />
      </>
    );
  }
  const entries: any[] = r.logs?.entries ?? [];
  const path = entries.filter((e) => e.event === 'node_entered');
  const latencies = entries.filter((e) => e.event === 'turn').map((e) => e.details ?? {});
  const turns = transcript.data?.turns ?? [];
  // the i-th `turn` log entry is the i-th agent reply that answered the caller
  const latencyOf = new Map<number, any>();
  let li = 0;
  turns.forEach((t, i) => {
    if (t.role !== 'user' && turns.slice(0, i).some((x) => x.role === 'user') && turns[i - 1]?.role === 'user' && li < latencies.length) latencyOf.set(i, latencies[li++]);
  });
  const seek = (t: Turn) => {
    const a = audio.current;
    if (!a) return;
    a.currentTime = t.start_ms / 1000;
    void a.play().catch(() => undefined);
  };
  const gathered = Object.entries(r.gathered_context ?? {});
  return (
    <>
      <div class="title-row">
        <h1>
          Run #{r.id} <span class="muted">{r.name}</span>
        </h1>
        <span class={`badge ${r.status}`}>{r.status}</span>
        <span class="muted">
          {r.mode} · {r.disposition ?? r.gathered_context?.mapped_call_disposition ?? 'no disposition yet'} · {fmtSeconds(r.duration_seconds)}
        </span>
        <span class="grow" />
        <a href={`/agents/${workflowId}`}>Agent</a>
        {r.campaign_id ? <a href={`/campaigns/${r.campaign_id}`}>Campaign</a> : null}
      </div>
      <div class="split">
        <Section title="Conversation">
          {recordingSrc ? (
            <>
              <audio
                ref={audio}
                controls
                preload="metadata"
                src={recordingSrc}
                class="player"
                aria-label="Call recording"
                onError={() => void onRecordingError()}
                onLoadedMetadata={(e) => onRecordingLoaded(e.currentTarget)}
                onTimeUpdate={(e) => setNow(e.currentTarget.currentTime * 1000)}
                onSeeked={(e) => setNow(e.currentTarget.currentTime * 1000)}
              />
              <a class="small" href={recordingSrc} download={`run-${r.id}.wav`}>
                Download the recording (WAV)
              </a>
            </>
          ) : r.recording_url ? null : (
            <p class="muted">No recording for this run.</p>
          )}
          <ErrorBox error={recordingError} />
          <ErrorBox error={transcript.error} />
          {!r.transcript_url ? <p class="muted">No transcript for this run.</p> : null}
          <ol class="transcript" aria-label="Transcript">
            {turns.map((t, i) => {
              const playing = now >= t.start_ms && now < t.end_ms;
              const lat = latencyOf.get(i);
              return (
                <li key={i} class={`turn ${t.role}${playing ? ' playing' : ''}`}>
                  <button type="button" class="turn-btn" onClick={() => seek(t)} disabled={!recordingSrc} aria-label={`Play from ${fmtMs(t.start_ms)}: ${t.role === 'user' ? 'caller' : 'agent'}`}>
                    {fmtMs(t.start_ms)}
                  </button>
                  <div>
                    <strong>{t.role === 'user' ? 'Caller' : 'Agent'}</strong>
                    {t.node_id ? <span class="small muted"> · {t.node_id}</span> : null}
                    {t.interrupted ? <span class="badge">interrupted</span> : null}
                    <p>{t.text}</p>
                    {lat ? (
                      <p class="small muted latency">
                        replied in {lat.end_of_speech_to_first_audio} ms (stt {lat.stt} · llm {lat.llm_first_token} · tts {lat.tts_first_audio})
                      </p>
                    ) : null}
                  </div>
                </li>
              );
            })}
          </ol>
        </Section>
        <div class="side">
          <Section title="Node path">
            {path.length ? (
              <ol class="path">
                {path.map((e) => (
                  <li>
                    {e.details?.node_name ?? e.details?.node_id} <span class="small muted">{fmtDate(e.ts)}</span>
                  </li>
                ))}
              </ol>
            ) : (
              <p class="muted">The call did not enter any node (it never connected, or the agent did not talk).</p>
            )}
            {definition.data ? (
              <div class="graph-scroll small-graph">
                <GraphView def={definition.data} visited={new Set(path.map((e) => e.details?.node_id))} />
              </div>
            ) : null}
          </Section>
          <Section title="Gathered context">
            {gathered.length ? (
              <dl class="kv">
                {gathered.map(([k, v]) => (
                  <>
                    <dt>{k}</dt>
                    <dd>{typeof v === 'object' ? JSON.stringify(v) : String(v)}</dd>
                  </>
                ))}
              </dl>
            ) : (
              <p class="muted">Nothing gathered.</p>
            )}
            <details>
              <summary>Initial context</summary>
              <pre>{JSON.stringify(r.initial_context, null, 2)}</pre>
            </details>
          </Section>
          <Section title="Cost">
            <dl class="kv">
              <dt>Call duration</dt>
              <dd>{fmtSeconds(r.cost_info?.call_duration_seconds)}</dd>
              <dt>Model tokens</dt>
              <dd>{r.cost_info?.service_token_usage ?? 0}</dd>
              <dt>Charge</dt>
              <dd>{fmtUsd(r.cost_info?.charge_usd)}</dd>
            </dl>
          </Section>
          <Section title="Log">
            <ol class="log">
              {entries.map((e) => (
                <li>
                  <time>{fmtDate(e.ts)}</time> <strong>{e.event}</strong> {e.message}
                </li>
              ))}
            </ol>
          </Section>
        </div>
      </div>
    </>
  );
}
