// A file imported as text through Vite's `?raw` (the docs whose figures a test holds to the product).
declare module '*.md?raw' {
  const text: string;
  export default text;
}
