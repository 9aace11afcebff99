//! MCP tool results as text for the model. Text blocks go as they are;
//! images, audio and binary resources become a one-line note (the model
//! cannot see base64); text resources are shown with their URI. The whole
//! result stays in the transcript as the call's metadata.

use serde_json::Value;

/// The model's view of a `CallToolResult` (as JSON).
pub fn render(result: &Value) -> String {
    let mut parts: Vec<String> = Vec::new();
    for block in result["content"].as_array().into_iter().flatten() {
        let kind = block["type"].as_str().unwrap_or("");
        match kind {
            "text" => parts.push(block["text"].as_str().unwrap_or("").to_string()),
            "image" | "audio" => parts.push(format!(
                "[{kind}: {}, {} bytes]",
                block["mimeType"].as_str().unwrap_or("unknown type"),
                block["data"].as_str().map_or(0, |d| d.len() / 4 * 3)
            )),
            "resource" => {
                let r = &block["resource"];
                let uri = r["uri"].as_str().unwrap_or("?");
                match r["text"].as_str() {
                    Some(t) => parts.push(format!("[resource {uri}]\n{t}")),
                    None => parts.push(format!(
                        "[resource {uri}: {}, {} bytes]",
                        r["mimeType"].as_str().unwrap_or("binary"),
                        r["blob"].as_str().map_or(0, |d| d.len() / 4 * 3)
                    )),
                }
            }
            "resource_link" => parts.push(format!(
                "[resource link {}{}]",
                block["uri"].as_str().unwrap_or("?"),
                block["name"]
                    .as_str()
                    .map(|n| format!(" ({n})"))
                    .unwrap_or_default()
            )),
            other => parts.push(format!("[{other} content]")),
        }
    }
    if parts.is_empty()
        && let Some(s) = result.get("structuredContent").filter(|v| !v.is_null())
    {
        parts.push(serde_json::to_string_pretty(s).unwrap_or_default());
    }
    parts.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn each_kind_of_content() {
        let r = json!({"content": [
            {"type": "text", "text": "hello"},
            {"type": "image", "mimeType": "image/png", "data": "AAAA"},
            {"type": "resource", "resource": {"uri": "file:///a.txt", "text": "alpha"}},
            {"type": "resource", "resource": {"uri": "file:///b.bin", "blob": "AAAAAAAA", "mimeType": "application/octet-stream"}},
            {"type": "resource_link", "uri": "file:///c", "name": "c"}
        ]});
        assert_eq!(
            render(&r),
            "hello\n[image: image/png, 3 bytes]\n[resource file:///a.txt]\nalpha\n\
             [resource file:///b.bin: application/octet-stream, 6 bytes]\n[resource link file:///c (c)]"
        );
        assert_eq!(
            render(&json!({"content": [], "structuredContent": {"n": 1}})),
            "{\n  \"n\": 1\n}"
        );
    }
}
