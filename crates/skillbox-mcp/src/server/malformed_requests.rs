//! Requests rmcp could not decode. rmcp reads a request into the typed params of its method,
//! and when they do not fit (`skills/get` without params, or without `uri`) it hands the
//! request on as a custom one, whose default answer is -32601 "method not found" with the
//! method's name as the message: a client that sent a known method with bad params was told
//! the method does not exist. Here a known method's params are decoded again to say what is
//! wrong with them (-32602, naming the member); only methods this server does not know are
//! -32601.

use rmcp::ErrorData;
use rmcp::model::{
    CallToolRequestMethod, CallToolRequestParams, CompleteRequestMethod, CompleteRequestParams,
    ConstString, CustomRequest, ErrorCode, GetPromptRequestMethod, GetPromptRequestParams,
    GetSkillRequestMethod, GetSkillRequestParams, InitializeRequestParams, InitializeResultMethod,
    ListPromptsRequestMethod, ListResourceTemplatesRequestMethod, ListResourcesRequestMethod,
    ListSkillsRequestMethod, ListToolsRequestMethod, PaginatedRequestParams,
    ReadResourceDirectoryRequestMethod, ReadResourceDirectoryRequestParams,
    ReadResourceRequestMethod, ReadResourceRequestParams, SubscribeRequestMethod,
    SubscribeRequestParams, UnsubscribeRequestMethod, UnsubscribeRequestParams,
};
use serde::de::DeserializeOwned;
use serde_json::Value;

/// The answer to a request rmcp handed on undecoded.
pub(super) fn refusal(request: &CustomRequest) -> ErrorData {
    let method = request.method.as_str();
    let params = request.params.as_ref();
    let problem = match method {
        GetSkillRequestMethod::VALUE => problem::<GetSkillRequestParams>(params),
        ReadResourceRequestMethod::VALUE => problem::<ReadResourceRequestParams>(params),
        ReadResourceDirectoryRequestMethod::VALUE => {
            problem::<ReadResourceDirectoryRequestParams>(params)
        }
        SubscribeRequestMethod::VALUE => problem::<SubscribeRequestParams>(params),
        UnsubscribeRequestMethod::VALUE => problem::<UnsubscribeRequestParams>(params),
        GetPromptRequestMethod::VALUE => problem::<GetPromptRequestParams>(params),
        CallToolRequestMethod::VALUE => problem::<CallToolRequestParams>(params),
        CompleteRequestMethod::VALUE => problem::<CompleteRequestParams>(params),
        InitializeResultMethod::VALUE => problem::<InitializeRequestParams>(params),
        ListToolsRequestMethod::VALUE
        | ListPromptsRequestMethod::VALUE
        | ListResourcesRequestMethod::VALUE
        | ListResourceTemplatesRequestMethod::VALUE
        | ListSkillsRequestMethod::VALUE => problem::<PaginatedRequestParams>(params),
        _ => {
            return ErrorData::new(
                ErrorCode::METHOD_NOT_FOUND,
                format!("unknown method `{method}`"),
                None,
            );
        }
    };
    let problem = problem.unwrap_or_else(|| "they could not be read".to_owned());
    ErrorData::invalid_params(format!("invalid params for `{method}`: {problem}"), None)
}

/// What is wrong with `params` as `T` (absent params read as `{}`), if anything.
fn problem<T: DeserializeOwned>(params: Option<&Value>) -> Option<String> {
    let params = params
        .cloned()
        .unwrap_or_else(|| Value::Object(serde_json::Map::new()));
    serde_json::from_value::<T>(params)
        .err()
        .map(|error| error.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn answer(method: &str, params: Option<Value>) -> (i32, String) {
        let error = refusal(&CustomRequest::new(method, params));
        (error.code.0, error.message.into_owned())
    }

    #[test]
    fn known_methods_with_bad_params_are_invalid_params_naming_the_member() {
        assert_eq!(
            answer("skills/get", None),
            (
                -32602,
                "invalid params for `skills/get`: missing field `uri`".into()
            )
        );
        assert_eq!(
            answer("skills/get", Some(json!({"url": "skill://a/SKILL.md"}))),
            (
                -32602,
                "invalid params for `skills/get`: missing field `uri`".into()
            )
        );
        let (code, message) = answer("skills/get", Some(json!({"uri": 7})));
        assert_eq!(code, -32602);
        assert!(message.contains("invalid type: integer `7`"), "{message}");
        let (code, message) = answer("prompts/get", Some(json!([])));
        assert_eq!(code, -32602);
        assert!(
            message.starts_with("invalid params for `prompts/get`"),
            "{message}"
        );
        let (code, message) = answer("tools/list", Some(json!({"cursor": 5})));
        assert_eq!(code, -32602, "{message}");
        assert_eq!(
            answer("no/such/method", Some(json!({}))),
            (-32601, "unknown method `no/such/method`".into())
        );
    }
}
