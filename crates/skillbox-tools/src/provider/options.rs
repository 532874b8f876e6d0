//! How a provider behaves: the prompt budget, file and load limits, and the opt-in features
//! (`define_tool`, command preprocessing, when `find_skills` is offered).

use crate::prompt::PromptBudget;

use super::DEFAULT_MAX_FILE_BYTES;

/// Provider options.
#[derive(Debug, Clone)]
pub struct ProviderOptions {
    /// Size limit of the system-prompt section.
    pub prompt_budget: PromptBudget,
    /// Bytes `read_skill_file` returns at most.
    pub max_file_bytes: u64,
    /// Offer `define_tool` and `remove_tool` (seed 000 section 8); off by default.
    pub define_tools: bool,
    /// Where tools defined with `persistent: "true"` are saved as Skill Tools skills.
    pub persistent_tools_root: Option<std::path::PathBuf>,
    /// Where tools defined for this session only are written.
    pub session_tools_root: std::path::PathBuf,
    /// Run `` !`command` `` patterns in skill bodies when they are loaded; off by default.
    pub preprocess_commands: bool,
    /// When the skills profile offers `find_skills`.
    pub find_skills: FindSkillsOffer,
}

/// When the skills profile offers `find_skills` (it answers calls of it in every case).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum FindSkillsOffer {
    /// When the prompt budget leaves skills out, and then the prompt says to use it.
    #[default]
    Auto,
    /// Always.
    Always,
    /// Never.
    Never,
}

impl FindSkillsOffer {
    /// Parse `auto`, `always` or `never`.
    #[must_use]
    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "auto" => Some(FindSkillsOffer::Auto),
            "always" => Some(FindSkillsOffer::Always),
            "never" => Some(FindSkillsOffer::Never),
            _ => None,
        }
    }
}

impl Default for ProviderOptions {
    fn default() -> Self {
        ProviderOptions {
            prompt_budget: PromptBudget::default(),
            max_file_bytes: DEFAULT_MAX_FILE_BYTES,
            define_tools: false,
            persistent_tools_root: None,
            session_tools_root: std::env::temp_dir().join("skillbox").join("defined-tools"),
            preprocess_commands: false,
            find_skills: FindSkillsOffer::Auto,
        }
    }
}
