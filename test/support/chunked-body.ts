// A request body sent as a stream: it carries no Content-Length, as a chunked upload arrives,
// so only a cap that counts the bytes read can stop it.

/** `text` as a stream of `chunkBytes`-sized chunks. Pass it with `duplex: 'half'`. */
export function chunkedBody(text: string, chunkBytes = 64 * 1024): ReadableStream<Uint8Array> {
  const bytes = new TextEncoder().encode(text);
  let sent = 0;
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      if (sent >= bytes.length) return controller.close();
      controller.enqueue(bytes.subarray(sent, sent + chunkBytes));
      sent += chunkBytes;
    },
  });
}
