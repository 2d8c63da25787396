#!/usr/bin/env bash
# Regenerates the answering-machine detection fixtures in test/fixtures/amd/ (docs/voicemail.md "Measured"):
# G.711 μ-law 8 kHz mono WAV, what a carrier sends us, each with the transcript an STT would return
# (<name>.txt) and a line in fixtures.json (expected verdict, speech and beep times). Human answers say a few
# words and wait; voicemail greetings talk on, some end with a beep (1000 / 850 / 1400 Hz), some do not.
# Every file carries line noise (pink noise, under the VAD's energy gate; one louder).
#
# Needs espeak-ng and sox (Debian: apt-get install -y espeak-ng sox). espeak-ng is GPL-3.0: it is only run
# here as a program to make audio files. `npm test` and the bench only read the committed files. Output is
# deterministic for a given espeak-ng/sox version (sox -R; 1.51/14.4.2 made the committed files).
set -euo pipefail
if ! command -v espeak-ng >/dev/null || ! command -v sox >/dev/null; then
  if [ "$(id -u)" = 0 ]; then apt-get install -y espeak-ng sox >/dev/null; else echo "needs espeak-ng and sox: apt-get install -y espeak-ng sox" >&2; exit 1; fi
fi

OUT="$(cd "$(dirname "$0")/.." && pwd)/test/fixtures/amd"
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
mkdir -p "$OUT"
rm -f "$OUT"/*.wav "$OUT"/*.txt
RAW=(-r 8000 -e signed -b 16 -c 1)
ULAW=(-D -r 8000 -e mu-law -b 8 -c 1)
ENTRIES=()

ms() { awk "BEGIN{printf \"%d\", ($1)*1000 + 0.5}"; }

# speech <file> <voice> <speed> <text>: 16-bit 8 kHz speech at about -3 dBFS peak
speech() { espeak-ng -v "$2" -s "$3" --stdout "$4" | sox -R -t wav - "${RAW[@]}" "$1" gain -n -3; }

# fixture <name> <label> <lead s> <tail s> <noise dB> <voice> <speed> <text> [<beep Hz> <gap s> <beep s>]
fixture() {
  local name=$1 label=$2 lead=$3 tail=$4 noise=$5 voice=$6 speed=$7 text=$8 hz=${9:-} gap=${10:-0} beep=${11:-0}
  speech "$TMP/s.wav" "$voice" "$speed" "$text"
  local dur; dur=$(soxi -D "$TMP/s.wav")
  sox -R "$TMP/s.wav" "$TMP/a.wav" pad "$lead" 0
  local beep_json=null
  if [ -n "$hz" ]; then
    sox -R -n "${RAW[@]}" "$TMP/b.wav" synth "$beep" sine "$hz" gain -8 fade 0.005 "$beep" 0.005
    sox -R "$TMP/a.wav" -p pad 0 "$gap" | sox -R - "$TMP/b.wav" "$TMP/c.wav"
    mv "$TMP/c.wav" "$TMP/a.wav"
    beep_json="{\"hz\": $hz, \"onset_ms\": $(ms "$lead+$dur+$gap"), \"end_ms\": $(ms "$lead+$dur+$gap+$beep")}"
  fi
  sox -R "$TMP/a.wav" "$TMP/p.wav" pad 0 "$tail"
  local total; total=$(soxi -D "$TMP/p.wav")
  sox -R -n "${RAW[@]}" "$TMP/n.wav" synth "$total" pinknoise gain "$noise"
  sox -R -m "$TMP/p.wav" "$TMP/n.wav" "${ULAW[@]}" "$OUT/$name.wav"
  printf '%s\n' "$text" > "$OUT/$name.txt"
  ENTRIES+=("    \"$name\": {\"expected\": \"$label\", \"speech_ms\": [$(ms "$lead"), $(ms "$lead+$dur")], \"beep\": $beep_json}")
}

# Human answers: a few words, then they wait for us.
fixture human-hello          human 0.6 1.0 -52 en-us 165 "Hello?"
fixture human-hi-this-is-sam human 0.4 1.0 -52 en-us 170 "Hi, this is Sam."
fixture human-yeah-hello     human 0.8 1.0 -48 en-us+m3 165 "Yeah, hello?"
fixture human-who-is-calling human 0.5 1.0 -52 en-us+f3 165 "Hello, who's calling?"
fixture human-dana-speaking  human 0.5 1.0 -46 en-gb 160 "Good afternoon, Dana speaking."
# a person who talks on: only the words can tell (our long-greeting rule calls it a machine)
fixture human-long-answer    human 0.5 1.0 -50 en-us 175 "Hello, yes, this is Sam Carter speaking, who is this?"

# Voicemail greetings, with and without a beep.
fixture vm-sam-beep-1000     machine 0.7 0.3 -52 en-us 185 "Hi, you've reached Sam. Please leave a message after the tone." 1000 0.4 0.5
fixture vm-dana-beep-850     machine 0.7 0.3 -48 en-gb 180 "This is Dana Lee. Please leave your name and number after the beep." 850 0.6 0.4
fixture vm-carrier-beep-1400 machine 0.5 0.3 -52 en-us+f3 185 "The person you are calling is not available. Record your message at the tone." 1400 0.5 0.3
# a greeting as short as a person's: only the words or the beep can tell
fixture vm-short-beep-950    machine 0.6 0.3 -52 en-us 175 "Sam. Leave a message." 950 0.3 0.4
fixture vm-alex-no-beep      machine 0.6 1.4 -52 en-us+m3 180 "Hey, it's Alex. Leave me a message and I'll get back to you."
fixture vm-office-no-beep    machine 0.8 1.4 -44 en-us 185 "Thanks for calling Acme Dental. Our office is closed right now."

{
  echo '{'
  echo '  "format": "G.711 mu-law, 8000 Hz, mono WAV; <name>.txt is the transcript an STT would return",'
  echo '  "fixtures": {'
  (IFS=$'\n'; echo "${ENTRIES[*]}" | sed '$!s/$/,/')
  echo '  }'
  echo '}'
} > "$OUT/fixtures.json"
cat "$OUT"/*.wav | wc -c | awk '{printf "%d bytes of audio\n", $1}'
