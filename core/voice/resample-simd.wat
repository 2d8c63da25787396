;; The resampler's integer-decimation kernel in WebAssembly SIMD (core/voice/resample-simd.ts loads it; regenerate
;; core/voice/resample-simd.wasm.ts with scripts/make-resample-wasm.sh after editing this file).
;;
;; out[n] = int16(clamp(nearest(sum over j < kp of taps[j] * w[n * step / 4 + j])))   for n < count
;;
;; taps, w, out: byte offsets into the memory; taps and w are f32, kp a multiple of 8 (taps past the filter's
;; length are 0); step: bytes between the first inputs of two consecutive outputs (the decimation factor × 4).
;; Eight products per iteration into two f32x4 sums (one sum made every add wait for the one before it).
(module
  (memory (export "memory") 1)
  (func (export "decimate") (param $taps i32) (param $kp i32) (param $step i32) (param $w i32) (param $count i32) (param $out i32)
    (local $n i32) (local $j i32) (local $end i32) (local $a v128) (local $b v128) (local $s f32)
    (local.set $end (i32.shl (local.get $kp) (i32.const 2)))
    (block $done
      (loop $outer
        (br_if $done (i32.ge_u (local.get $n) (local.get $count)))
        (local.set $a (v128.const f32x4 0 0 0 0))
        (local.set $b (v128.const f32x4 0 0 0 0))
        (local.set $j (i32.const 0))
        (loop $inner
          (local.set $a (f32x4.add (local.get $a)
            (f32x4.mul (v128.load (i32.add (local.get $taps) (local.get $j)))
                       (v128.load (i32.add (local.get $w) (local.get $j))))))
          (local.set $b (f32x4.add (local.get $b)
            (f32x4.mul (v128.load offset=16 (i32.add (local.get $taps) (local.get $j)))
                       (v128.load offset=16 (i32.add (local.get $w) (local.get $j))))))
          (local.set $j (i32.add (local.get $j) (i32.const 32)))
          (br_if $inner (i32.lt_u (local.get $j) (local.get $end))))
        (local.set $a (f32x4.add (local.get $a) (local.get $b)))
        (local.set $s (f32.add
          (f32.add (f32x4.extract_lane 0 (local.get $a)) (f32x4.extract_lane 1 (local.get $a)))
          (f32.add (f32x4.extract_lane 2 (local.get $a)) (f32x4.extract_lane 3 (local.get $a)))))
        (local.set $s (f32.min (f32.max (f32.nearest (local.get $s)) (f32.const -32768)) (f32.const 32767)))
        (i32.store16 (i32.add (local.get $out) (i32.shl (local.get $n) (i32.const 1))) (i32.trunc_f32_s (local.get $s)))
        (local.set $w (i32.add (local.get $w) (local.get $step)))
        (local.set $n (i32.add (local.get $n) (i32.const 1)))
        (br $outer)))))
