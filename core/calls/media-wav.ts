/**
 * WAV framing of a call's G.711 μ-law recording. The RIFF writer lives with the other audio helpers in
 * core/voice/wav.ts (one implementation for μ-law and PCM recordings); these names stay for the media session.
 */
export { MULAW_WAV_HEADER_BYTES, WAVE_FORMAT_MULAW, mulawWavHeader, wavPadding } from '../voice/wav.js';
