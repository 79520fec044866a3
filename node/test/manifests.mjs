// The manifest of the SDK's test extension, shared by the tests and the bench: the
// installed binary re-invoked as `__extension test-extension` (API 0.4), with every
// contribution the extension has.

export const SDK_TOOLS = ["echo", "sleep", "progress", "confirm", "ask", "notify", "crash", "big", "fail", "panic", "env", "events"];

/** The `extension.toml` of the SDK test extension named `name`, run by `binary`. */
export function sdkManifest(binary, name = "fixture") {
  return `name = "${name}"
version = "0.1.0"
api_version = "0.4"

[entrypoint]
command = ${JSON.stringify(binary)}
args = ["__extension", "test-extension"]

[contributes]
tools = ${JSON.stringify(SDK_TOOLS)}
commands = ["fixture"]
hooks = ["before_prompt"]
context = true
ui = ["status"]
tool_renderers = ["echo"]
notifications = true
confirmations = true
menu = true
`;
}
