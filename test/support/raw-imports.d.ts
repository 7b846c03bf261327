// A file imported as text through Vite's `?raw` (the docs whose figures a test holds to the product).
declare module '*.md?raw' {
  const text: string;
  export default text;
}

// A JSON file imported as its text, as a deployment's POLICY variable holds it.
declare module '*.json?raw' {
  const text: string;
  export default text;
}
