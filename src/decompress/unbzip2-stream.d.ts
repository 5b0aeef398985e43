// unbzip2-stream ships no types: it returns a classic `through` stream (write/end in, 'data'/'error'/'end' out).
declare module 'unbzip2-stream' {
  export default function unbzip2Stream(): NodeJS.ReadWriteStream;
}
