// The package ships no usable type declarations (its `types` names a missing file).
declare module 'unicode-confusables' {
  /** Each character replaced by its prototype in UTS #39 confusables.txt (Unicode 10.0.0); zero-width characters dropped. */
  export function rectifyConfusion(text: string): string
  /** Whether any character of the text has a confusable prototype. */
  export function isConfusing(text: string): boolean
}
