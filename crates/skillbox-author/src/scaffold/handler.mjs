
// The `{{tool}}` tool (tools.json): skillbox imports this module and calls
// its default export with the arguments as an object.
export default async function handler(args) {
  const text = args?.text;
  if (typeof text !== "string") {
    throw new TypeError("'text' is required and must be a string");
  }
  return count(text);
}
