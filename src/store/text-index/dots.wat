;; The vector scan's dot products in WebAssembly SIMD (src/store/text-index/vectors.ts).
;; dot-kernel.ts holds this module assembled (test/store/dot-kernel.test.ts assembles this text
;; with wabt and compares); edit here, then paste the new bytes there.
;;
;; Columns are f32, one per dimension, BLOCK slots each; the dot products are f64. Both
;; functions add to dots[i] for i in [0, n), two slots a step (an odd n also writes dots[n] and
;; reads the slot after the last of each column: the caller leaves room). Every slot gets the
;; same operations in the same order as the JavaScript loop it replaces,
;;   dots[i] += a[i]*va + b[i]*vb + c[i]*vc + d[i]*vd
;; (f32 promoted to f64, left to right), so the sums are bitwise equal.
(module
  (import "env" "memory" (memory 1))

  ;; dots[i] += a[i]*va
  (func (export "dots1") (param $dots i32) (param $n i32) (param $a i32) (param $va f64)
    (local $i i32) (local $A v128) (local $at i32)
    (local.set $A (f64x2.splat (local.get $va)))
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $i) (local.get $n)))
        (local.set $at (i32.add (local.get $dots) (i32.shl (local.get $i) (i32.const 3))))
        (v128.store (local.get $at)
          (f64x2.add (v128.load (local.get $at))
            (f64x2.mul (f64x2.promote_low_f32x4 (v128.load64_zero (i32.add (local.get $a) (i32.shl (local.get $i) (i32.const 2))))) (local.get $A))))
        (local.set $i (i32.add (local.get $i) (i32.const 2)))
        (br $next))))

  ;; dots[i] += a[i]*va + b[i]*vb + c[i]*vc + d[i]*vd
  (func (export "dots4") (param $dots i32) (param $n i32) (param $a i32) (param $b i32) (param $c i32) (param $d i32)
        (param $va f64) (param $vb f64) (param $vc f64) (param $vd f64)
    (local $i i32) (local $A v128) (local $B v128) (local $C v128) (local $D v128) (local $o4 i32) (local $at i32)
    (local.set $A (f64x2.splat (local.get $va)))
    (local.set $B (f64x2.splat (local.get $vb)))
    (local.set $C (f64x2.splat (local.get $vc)))
    (local.set $D (f64x2.splat (local.get $vd)))
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $i) (local.get $n)))
        (local.set $o4 (i32.shl (local.get $i) (i32.const 2)))
        (local.set $at (i32.add (local.get $dots) (i32.shl (local.get $i) (i32.const 3))))
        (v128.store (local.get $at)
          (f64x2.add (v128.load (local.get $at))
            (f64x2.add
              (f64x2.add
                (f64x2.add
                  (f64x2.mul (f64x2.promote_low_f32x4 (v128.load64_zero (i32.add (local.get $a) (local.get $o4)))) (local.get $A))
                  (f64x2.mul (f64x2.promote_low_f32x4 (v128.load64_zero (i32.add (local.get $b) (local.get $o4)))) (local.get $B)))
                (f64x2.mul (f64x2.promote_low_f32x4 (v128.load64_zero (i32.add (local.get $c) (local.get $o4)))) (local.get $C)))
              (f64x2.mul (f64x2.promote_low_f32x4 (v128.load64_zero (i32.add (local.get $d) (local.get $o4)))) (local.get $D)))))
        (local.set $i (i32.add (local.get $i) (i32.const 2)))
        (br $next))))
)
