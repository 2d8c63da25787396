#!/usr/bin/env bash
# Regenerates the speech fixtures in test/fixtures/audio/ (G.711 μ-law 8 kHz mono WAV, the carriers' format).
# Needs espeak-ng and sox (Debian: apt-get install -y espeak-ng sox). espeak-ng is GPL-3.0: it is only run
# here as a program to make audio files; nothing links it. `npm test` only reads the committed files, so this
# script is needed only to change them. Output is deterministic for a given espeak-ng/sox version (1.51/14.4.2
# made the committed files).
#
# Each utterance is padded with LEAD seconds of digital silence before and TAIL after, so tests know where the
# speech can be: inside [LEAD, duration - TAIL] (espeak adds a few ms of its own silence at both ends).
set -euo pipefail
command -v espeak-ng >/dev/null || { echo "espeak-ng is missing: apt-get install -y espeak-ng sox" >&2; exit 1; }
command -v sox >/dev/null || { echo "sox is missing: apt-get install -y espeak-ng sox" >&2; exit 1; }

OUT="$(cd "$(dirname "$0")/.." && pwd)/test/fixtures/audio"
mkdir -p "$OUT"
LEAD=0.5
TAIL=0.7
ULAW=(-D -r 8000 -e mu-law -b 8 -c 1)

say() { # name, text[, words per minute: 165]
  espeak-ng -v en-us -s "${3:-165}" --stdout "$2" | sox -R -t wav - "${ULAW[@]}" "$OUT/$1.wav" gain -n -3 pad "$LEAD" "$TAIL"
}

say yes-i-will-attend "Yes, I will attend."
say hello-who-is-this "Hello? Who is this?"
say can-you-repeat-that "Sorry, can you repeat that?"
say uh-huh "Uh-huh."
say mm-hmm "Mm-hmm."
# a quick backchannel, spoken faster (~260 ms of sustained speech to the VADs): shorter than interruption_min_speech_ms's 300 ms default,
# where "uh-huh" (~410 ms) and "mm-hmm" (~600 ms) at the usual rate are longer
say yeah "Yeah." 215
say barge-in-long "Sorry to interrupt, but I actually need to move my appointment to next Tuesday afternoon, if that is still possible."

# 2 s of digital silence, 2 s of quiet line noise (about -55 dBFS RMS, under the VAD's energy gate) and 2 s of
# louder hiss (about -35 dBFS RMS: above the gate, so only the model can tell it is not speech).
sox -R -n "${ULAW[@]}" "$OUT/silence-2s.wav" trim 0 2
sox -R -n "${ULAW[@]}" "$OUT/noise-low-2s.wav" synth 2 pinknoise gain -42
sox -R -n "${ULAW[@]}" "$OUT/noise-hiss-2s.wav" synth 2 whitenoise gain -23

# A cough-like burst: 200 ms of noise band-passed around 900 Hz, a 10 ms attack and a 160 ms decay, padded like
# the speech (about -17 dBFS at its loudest 32 ms): loud and speech-like enough for any VAD, but shorter than
# interruption_min_speech_ms.
sox -R -n "${ULAW[@]}" "$OUT/cough.wav" synth 0.2 whitenoise band 900 700 fade q 0.01 0.2 0.16 gain -n -8 pad "$LEAD" "$TAIL"

cat > "$OUT/fixtures.json" <<JSON
{
  "format": "G.711 mu-law, 8000 Hz, mono WAV",
  "lead_ms": $(awk "BEGIN{print $LEAD*1000}"),
  "tail_ms": $(awk "BEGIN{print $TAIL*1000}"),
  "speech": {
    "yes-i-will-attend": "Yes, I will attend.",
    "hello-who-is-this": "Hello? Who is this?",
    "can-you-repeat-that": "Sorry, can you repeat that?",
    "uh-huh": "Uh-huh.",
    "mm-hmm": "Mm-hmm.",
    "yeah": "Yeah.",
    "barge-in-long": "Sorry to interrupt, but I actually need to move my appointment to next Tuesday afternoon, if that is still possible."
  },
  "non_speech": ["silence-2s", "noise-low-2s", "noise-hiss-2s"],
  "bursts": ["cough"]
}
JSON
ls -l "$OUT"
