/** A destination that keeps what a logger writes, as a non-terminal stdout would take it. */
export function memoryStream(options: { isTTY?: boolean } = {}): {
  write(text: string): boolean;
  isTTY?: boolean;
  text(): string;
} {
  let written = '';
  return {
    write(text) {
      written += text;
      return true;
    },
    ...(options.isTTY ? { isTTY: true } : {}),
    text: () => written,
  };
}
