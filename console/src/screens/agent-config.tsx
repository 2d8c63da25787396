import { useState } from 'preact/hooks';
import { get, isMissingEndpoint, put } from '../api';
import { ErrorBox, Section, useAction, useLoad } from '../ui';

const num = (v: string) => (v === '' ? undefined : Number(v));

/** workflow_configurations: the models (pickers fed by the organization's AI services), timeouts, voicemail. */
export function ConfigForm({ workflow, onSaved }: { workflow: any; onSaved: (w: any) => void }) {
  const services = useLoad(() => get<{ ai_services: any[] }>('/organizations/ai-services'), []);
  const [cfg, setCfg] = useState<Record<string, any>>(structuredClone(workflow.workflow_configurations ?? {}));
  const action = useAction();
  const setPart = (part: string, k: string, v: unknown) => setCfg({ ...cfg, [part]: { ...(cfg[part] ?? {}), [k]: v } });
  const setTop = (k: string, v: unknown) => setCfg({ ...cfg, [k]: v });
  const save = (e: Event) => {
    e.preventDefault();
    // drop empty model parts so a half-filled picker does not fail validation
    const out: Record<string, any> = {};
    for (const [k, v] of Object.entries(cfg)) {
      if (v === undefined || v === null || v === '') continue;
      if (['llm', 'stt', 'tts'].includes(k) && !(v as any).service_id) continue;
      out[k] = v;
    }
    void action.run(async () => onSaved(await put(`/workflow/${workflow.id}`, { workflow_configurations: out })));
  };
  const list = services.data?.ai_services ?? [];
  const picker = (kind: 'llm' | 'stt' | 'tts', label: string) => (
    <fieldset>
      <legend>{label}</legend>
      <div class="field">
        <label for={`${kind}-service`}>Service</label>
        <select id={`${kind}-service`} value={cfg[kind]?.service_id ?? ''} onChange={(e) => setPart(kind, 'service_id', num(e.currentTarget.value))}>
          <option value="">— none —</option>
          {list
            .filter((s) => (s.kinds ?? []).includes(kind))
            .map((s) => (
              <option value={s.id}>
                {s.name} ({s.provider})
              </option>
            ))}
        </select>
      </div>
      <div class="field">
        <label for={`${kind}-model`}>Model</label>
        <input id={`${kind}-model`} value={cfg[kind]?.model ?? ''} onInput={(e) => setPart(kind, 'model', e.currentTarget.value || undefined)} placeholder={kind === 'llm' ? 'gpt-4o-mini' : ''} />
      </div>
      {kind === 'llm' ? (
        <div class="field">
          <label for="llm-temperature">Temperature</label>
          <input id="llm-temperature" type="number" step="0.1" min="0" max="2" value={cfg.llm?.temperature ?? ''} onInput={(e) => setPart('llm', 'temperature', num(e.currentTarget.value))} />
        </div>
      ) : null}
      {kind === 'stt' ? (
        <div class="field">
          <label for="stt-language">Language</label>
          <input id="stt-language" value={cfg.stt?.language ?? ''} onInput={(e) => setPart('stt', 'language', e.currentTarget.value || undefined)} placeholder="en" />
        </div>
      ) : null}
      {kind === 'tts' ? (
        <div class="field">
          <label for="tts-voice">Voice</label>
          <input id="tts-voice" value={cfg.tts?.voice ?? ''} onInput={(e) => setPart('tts', 'voice', e.currentTarget.value || undefined)} />
        </div>
      ) : null}
    </fieldset>
  );
  const vm = cfg.voicemail ?? {};
  return (
    <Section title="Configuration">
      {isMissingEndpoint(services.error) ? <ErrorBox error={services.error} what="AI services" /> : <ErrorBox error={services.error} />}
      {services.data && list.length === 0 ? (
        <p class="notice">
          No AI services yet: <a href="/ai-services">add one</a> to pick the agent's models.
        </p>
      ) : null}
      <form onSubmit={save}>
        <div class="grid3">
          {picker('llm', 'Language model')}
          {picker('stt', 'Speech to text')}
          {picker('tts', 'Text to speech')}
        </div>
        <div class="grid3">
          <div class="field">
            <label for="max-duration">Max call duration (s, 10–14400)</label>
            <input id="max-duration" type="number" min="10" max="14400" value={cfg.max_call_duration_seconds ?? ''} onInput={(e) => setTop('max_call_duration_seconds', num(e.currentTarget.value))} />
          </div>
          <div class="field">
            <label for="idle-timeout">Caller idle timeout (s, 3–120)</label>
            <input id="idle-timeout" type="number" min="3" max="120" value={cfg.user_idle_timeout_seconds ?? ''} onInput={(e) => setTop('user_idle_timeout_seconds', num(e.currentTarget.value))} />
          </div>
          <div class="field">
            <label for="interrupt-ms">Shortest interrupting speech (ms)</label>
            <input id="interrupt-ms" type="number" min="0" value={cfg.interruption_min_speech_ms ?? ''} onInput={(e) => setTop('interruption_min_speech_ms', num(e.currentTarget.value))} />
          </div>
        </div>
        <fieldset>
          <legend>Voicemail</legend>
          <div class="field check">
            <input id="vm-detect" type="checkbox" checked={Boolean(vm.detect)} onChange={(e) => setTop('voicemail', { ...vm, detect: e.currentTarget.checked, action: vm.action ?? 'hangup' })} />
            <label for="vm-detect">Detect answering machines</label>
          </div>
          {vm.detect ? (
            <div class="row">
              <div class="field">
                <label for="vm-action">Then</label>
                <select id="vm-action" value={vm.action ?? 'hangup'} onChange={(e) => setTop('voicemail', { ...vm, action: e.currentTarget.value })}>
                  <option value="hangup">hang up</option>
                  <option value="leave_message">leave a message</option>
                </select>
              </div>
              {vm.action === 'leave_message' ? (
                <div class="field grow">
                  <label for="vm-message">Message</label>
                  <input id="vm-message" value={vm.message ?? ''} onInput={(e) => setTop('voicemail', { ...vm, message: e.currentTarget.value })} />
                </div>
              ) : null}
            </div>
          ) : null}
        </fieldset>
        <ErrorBox error={action.error} />
        <button class="primary" type="submit" disabled={action.busy}>
          Save configuration
        </button>
      </form>
    </Section>
  );
}
