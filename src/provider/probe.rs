//! Asking a local OpenAI-compatible server for its model's context window.
//!
//! Local servers run models with small windows (llama.cpp and vLLM are
//! often started with 4,096 tokens), and a model name the runner does not
//! know gets a guess of 128,000. Compacting against the guess never
//! happens in time: the server refuses the prompt (llama.cpp, vLLM) or
//! silently cuts its beginning (Ollama). So, once a run for each server
//! and model, the runner asks what the servers publish, all three at once,
//! while the first answer streams (never before the first request):
//! - llama.cpp's `GET /props`: `default_generation_settings.n_ctx`;
//! - vLLM's `GET /v1/models`: the model's `max_model_len`;
//! - Ollama's `POST /api/show`: `num_ctx` in the model's `parameters`,
//!   else Ollama's default of 4,096 (at most the model's own length).
//!
//! The first answer with a number is the window ([`super::learn`] keeps
//! it for the run). OpenAI's own API is never asked: its models are in
//! the table.

use std::time::Duration;

use serde_json::{Value, json};

/// How long each question may take.
const TIMEOUT: Duration = Duration::from_secs(5);

/// Ollama's `num_ctx` when the model does not set one.
const OLLAMA_DEFAULT_CTX: u64 = 4096;

/// Whether `base_url` is a server worth asking: not OpenAI's own API.
pub fn worth_asking(base_url: &str) -> bool {
    !base_url.contains("api.openai.com")
}

/// The window the server at `base_url` (`…/v1`) says `model` has, and
/// which question told it.
pub async fn window(
    client: &reqwest::Client,
    base_url: &str,
    headers: &[(&'static str, String)],
    model: &str,
) -> Option<(u64, &'static str)> {
    let root = base_url.strip_suffix("/v1").unwrap_or(base_url);
    let get = |url: String| {
        let mut req = client.get(url).timeout(TIMEOUT);
        for (k, v) in headers {
            req = req.header(*k, v);
        }
        async move {
            req.send()
                .await
                .ok()?
                .error_for_status()
                .ok()?
                .json::<Value>()
                .await
                .ok()
        }
    };
    let props = get(format!("{root}/props"));
    let models = get(format!("{base_url}/models"));
    let show = async {
        let resp = client
            .post(format!("{root}/api/show"))
            .timeout(TIMEOUT)
            .json(&json!({"model": model}))
            .send()
            .await
            .ok()?;
        resp.error_for_status().ok()?.json::<Value>().await.ok()
    };
    let (props, models, show) = tokio::join!(props, models, show);
    let from_props = props.as_ref().and_then(llama_cpp_window);
    let from_models = models.as_ref().and_then(|m| vllm_window(m, model));
    let from_show = show.as_ref().and_then(ollama_window);
    from_props
        .map(|n| (n, "llama.cpp's /props"))
        .or(from_models.map(|n| (n, "vLLM's /v1/models")))
        .or(from_show.map(|n| (n, "Ollama's /api/show")))
}

fn positive(v: &Value) -> Option<u64> {
    v.as_u64().filter(|&n| n > 0)
}

/// llama.cpp's `/props`.
fn llama_cpp_window(props: &Value) -> Option<u64> {
    positive(&props["default_generation_settings"]["n_ctx"]).or_else(|| positive(&props["n_ctx"]))
}

/// vLLM's `/v1/models`: the entry of `model`.
fn vllm_window(models: &Value, model: &str) -> Option<u64> {
    models["data"]
        .as_array()?
        .iter()
        .find(|m| m["id"] == model)
        .and_then(|m| positive(&m["max_model_len"]))
}

/// Ollama's `/api/show`: the model's `num_ctx`, else Ollama's default,
/// never more than the model's own context length.
fn ollama_window(show: &Value) -> Option<u64> {
    let own = show["model_info"]
        .as_object()?
        .iter()
        .find(|(k, _)| k.ends_with(".context_length"))
        .and_then(|(_, v)| positive(v));
    let set = show["parameters"].as_str().and_then(|p| {
        p.lines().find_map(|l| {
            let mut words = l.split_whitespace();
            (words.next() == Some("num_ctx"))
                .then(|| words.next()?.parse::<u64>().ok())
                .flatten()
        })
    });
    let n = set.unwrap_or(OLLAMA_DEFAULT_CTX);
    Some(own.map_or(n, |own| n.min(own)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_each_server_publishes() {
        let props = json!({"default_generation_settings": {"n_ctx": 4096}, "total_slots": 1});
        assert_eq!(llama_cpp_window(&props), Some(4096));
        assert_eq!(llama_cpp_window(&json!({"n_ctx": 8192})), Some(8192));
        assert_eq!(llama_cpp_window(&json!({"n_ctx": 0})), None);

        let models = json!({"data": [{"id": "a", "max_model_len": 2048},
            {"id": "b", "max_model_len": 4096}, {"id": "c"}]});
        assert_eq!(vllm_window(&models, "b"), Some(4096));
        assert_eq!(vllm_window(&models, "c"), None);
        assert_eq!(vllm_window(&models, "z"), None);
        assert_eq!(vllm_window(&json!({"object": "list"}), "b"), None);

        let show = |params: &str, own: u64| json!({"parameters": params, "model_info": {"llama.context_length": own}});
        assert_eq!(
            ollama_window(&show("num_ctx 8192\nstop x", 32768)),
            Some(8192)
        );
        assert_eq!(ollama_window(&show("stop x", 32768)), Some(4096));
        assert_eq!(ollama_window(&show("num_ctx 65536", 32768)), Some(32768));
        assert_eq!(ollama_window(&show("", 2048)), Some(2048));
        assert_eq!(ollama_window(&json!({"error": "model not found"})), None);
    }

    #[test]
    fn openai_itself_is_never_asked() {
        assert!(!worth_asking("https://api.openai.com/v1"));
        assert!(worth_asking("http://127.0.0.1:8080/v1"));
    }
}
