// Reading an HTML form post. Anything that is not a form (JSON, a garbled or truncated body) is
// the client's mistake and gets a 400 from the caller, never a 500.

/** The form, or null when the body is not a readable form. */
export async function readForm(request: Request): Promise<FormData | null> {
  const type = request.headers.get('content-type') ?? '';
  if (!/^(application\/x-www-form-urlencoded|multipart\/form-data)\b/i.test(type)) return null;
  try {
    return await request.formData();
  } catch {
    return null;
  }
}
