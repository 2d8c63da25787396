const DAYS = ['Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday', 'Sunday'];

export interface CampaignSettings {
  max_concurrency: number;
  retry_config: { enabled: boolean; max_retries: number; retry_delay_seconds: number; retry_on_busy: boolean; retry_on_no_answer: boolean; retry_on_voicemail: boolean };
  circuit_breaker: { enabled: boolean; failure_threshold: number; window_seconds: number; min_calls_in_window: number };
  schedule_config: { enabled: boolean; timezone: string; slots: { day_of_week: number; start_time: string; end_time: string }[] } | null;
}

export const DEFAULT_SETTINGS: CampaignSettings = {
  max_concurrency: 5,
  retry_config: { enabled: true, max_retries: 2, retry_delay_seconds: 300, retry_on_busy: true, retry_on_no_answer: true, retry_on_voicemail: false },
  circuit_breaker: { enabled: false, failure_threshold: 0.5, window_seconds: 300, min_calls_in_window: 10 },
  schedule_config: null,
};

export function settingsOf(c: any): CampaignSettings {
  return {
    max_concurrency: c.max_concurrency ?? DEFAULT_SETTINGS.max_concurrency,
    retry_config: { ...DEFAULT_SETTINGS.retry_config, ...(c.retry_config ?? {}) },
    circuit_breaker: { ...DEFAULT_SETTINGS.circuit_breaker, ...(c.circuit_breaker ?? {}) },
    schedule_config: c.schedule_config ? { enabled: true, timezone: 'UTC', slots: [], ...c.schedule_config } : null,
  };
}

/** Retry, schedule, concurrency and circuit-breaker settings (create and PATCH share it). */
export function SettingsFields({ value, onChange, idPrefix }: { value: CampaignSettings; onChange: (v: CampaignSettings) => void; idPrefix: string }) {
  const p = idPrefix;
  const r = value.retry_config;
  const b = value.circuit_breaker;
  const s = value.schedule_config;
  const setR = (k: string, v: unknown) => onChange({ ...value, retry_config: { ...r, [k]: v } });
  const setB = (k: string, v: unknown) => onChange({ ...value, circuit_breaker: { ...b, [k]: v } });
  const setS = (next: CampaignSettings['schedule_config']) => onChange({ ...value, schedule_config: next });
  const check = (id: string, label: string, checked: boolean, on: (v: boolean) => void) => (
    <div class="field check">
      <input id={`${p}-${id}`} type="checkbox" checked={checked} onChange={(e) => on(e.currentTarget.checked)} />
      <label for={`${p}-${id}`}>{label}</label>
    </div>
  );
  const number = (id: string, label: string, v: number, on: (v: number) => void, attrs: Record<string, unknown> = {}) => (
    <div class="field">
      <label for={`${p}-${id}`}>{label}</label>
      <input id={`${p}-${id}`} type="number" value={v} onInput={(e) => on(Number(e.currentTarget.value))} {...attrs} />
    </div>
  );
  return (
    <div class="grid3">
      <fieldset>
        <legend>Calls</legend>
        {number('concurrency', 'Calls at once (1–100)', value.max_concurrency, (v) => onChange({ ...value, max_concurrency: v }), { min: 1, max: 100 })}
      </fieldset>
      <fieldset>
        <legend>Retries</legend>
        {check('retry', 'Retry calls that did not connect', r.enabled, (v) => setR('enabled', v))}
        {r.enabled ? (
          <>
            {number('retries', 'Retries (0–10)', r.max_retries, (v) => setR('max_retries', v), { min: 0, max: 10 })}
            {number('delay', 'Delay between tries (s)', r.retry_delay_seconds, (v) => setR('retry_delay_seconds', v), { min: 30, max: 86400 })}
            {check('busy', 'when busy', r.retry_on_busy, (v) => setR('retry_on_busy', v))}
            {check('noanswer', 'when not answered', r.retry_on_no_answer, (v) => setR('retry_on_no_answer', v))}
            {check('voicemail', 'on voicemail', r.retry_on_voicemail, (v) => setR('retry_on_voicemail', v))}
          </>
        ) : null}
      </fieldset>
      <fieldset>
        <legend>Circuit breaker</legend>
        {check('breaker', 'Pause when too many calls fail', b.enabled, (v) => setB('enabled', v))}
        {b.enabled ? (
          <>
            {number('threshold', 'Failure rate (0–1]', b.failure_threshold, (v) => setB('failure_threshold', v), { min: 0.01, max: 1, step: 0.05 })}
            {number('window', 'Window (s)', b.window_seconds, (v) => setB('window_seconds', v), { min: 10, max: 3600 })}
            {number('mincalls', 'Calls in the window at least', b.min_calls_in_window, (v) => setB('min_calls_in_window', v), { min: 1, max: 1000 })}
          </>
        ) : null}
      </fieldset>
      <fieldset class="span3">
        <legend>Schedule</legend>
        {check('schedule', 'Call only in these hours', Boolean(s), (v) => setS(v ? { enabled: true, timezone: Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC', slots: [0, 1, 2, 3, 4].map((d) => ({ day_of_week: d, start_time: '09:00', end_time: '17:00' })) } : null))}
        {s ? (
          <>
            <div class="field">
              <label for={`${p}-tz`}>Time zone (IANA)</label>
              <input id={`${p}-tz`} value={s.timezone} onInput={(e) => setS({ ...s, timezone: e.currentTarget.value })} />
            </div>
            {s.slots.map((slot, i) => (
              <div class="var-row">
                <select aria-label={`Slot ${i + 1} day`} value={slot.day_of_week} onChange={(e) => setS({ ...s, slots: s.slots.map((x, j) => (j === i ? { ...x, day_of_week: Number(e.currentTarget.value) } : x)) })}>
                  {DAYS.map((d, n) => (
                    <option value={n}>{d}</option>
                  ))}
                </select>
                <input aria-label={`Slot ${i + 1} start`} type="time" value={slot.start_time} onInput={(e) => setS({ ...s, slots: s.slots.map((x, j) => (j === i ? { ...x, start_time: e.currentTarget.value } : x)) })} />
                <input aria-label={`Slot ${i + 1} end`} value={slot.end_time} pattern="([01]\d|2[0-3]):[0-5]\d|24:00" onInput={(e) => setS({ ...s, slots: s.slots.map((x, j) => (j === i ? { ...x, end_time: e.currentTarget.value } : x)) })} />
                <button type="button" aria-label={`Remove slot ${i + 1}`} onClick={() => setS({ ...s, slots: s.slots.filter((_, j) => j !== i) })}>
                  ✕
                </button>
              </div>
            ))}
            <button type="button" onClick={() => setS({ ...s, slots: [...s.slots, { day_of_week: 0, start_time: '09:00', end_time: '17:00' }] })}>
              Add a slot
            </button>
          </>
        ) : null}
      </fieldset>
    </div>
  );
}
