//! What a round offers the model: the system prompt (the base prompt and the skills section)
//! and the tools. Rendering walks the whole catalog, so the last offer is kept and used again
//! while nothing it depends on changed.

use std::collections::BTreeSet;
use std::sync::Arc;

use skillbox_core::Skill;
use skillbox_tools::registry::{self, Offer};
use skillbox_tools::{ServerHolds, SkillsProvider, ToolProfile, ToolSpec};

use super::fork::Scope;
use super::{Agent, Conversation};

/// What a round offers the model: the system prompt and the tools, with the provider they
/// were rendered from. Rendering walks the whole catalog (milliseconds for a thousand
/// skills), so the agent keeps the last offer and uses it again while nothing it depends on
/// changed.
#[derive(Debug)]
pub(super) struct RoundOffer {
    /// The provider rendered from; holding it keeps the pointer comparison sound (a provider
    /// a reload replaced cannot be freed and another take its address while it is kept).
    pub(super) provider: Arc<SkillsProvider>,
    /// In tools-on-load mode, the loaded skills the tools were chosen for.
    pub(super) loaded: Option<BTreeSet<String>>,
    pub(super) system: Arc<str>,
    pub(super) tools: Vec<ToolSpec>,
    /// The tools' names, to check the calls against.
    pub(super) names: BTreeSet<String>,
}

impl Agent {
    /// The provider for this conversation: `current` unlocking the skills the person invoked.
    pub(super) fn scoped_provider(
        &self,
        current: &Arc<SkillsProvider>,
        conversation: &Conversation,
    ) -> Arc<SkillsProvider> {
        if conversation.invoked.is_empty() {
            Arc::clone(current)
        } else {
            Arc::new(current.with_unlocked(conversation.invoked.clone()))
        }
    }

    /// The system prompt and the tools offered this round: the last ones rendered while the
    /// provider in effect (`current`) and, in tools-on-load mode, the loaded skills are the
    /// same; when only the loaded skills changed, the tools alone are rendered again.
    /// Unlocking invoked skills changes neither, so `provider` (the scoped one) is not part of
    /// the key. Rendered every round: a sub-agent's share of the catalog, and a provider
    /// offering `define_tool` (a defined tool changes its tools in place).
    pub(super) fn offer(
        &self,
        current: &Arc<SkillsProvider>,
        provider: &SkillsProvider,
        scope: &Scope,
        loaded: &BTreeSet<String>,
    ) -> Arc<RoundOffer> {
        let wanted = self.options.tools_on_load.then_some(loaded);
        let reusable = scope.allowed.is_none() && !provider.options().define_tools;
        let same_provider = reusable
            .then(|| self.last_offer.lock().ok().and_then(|last| last.clone()))
            .flatten()
            .filter(|offer| Arc::ptr_eq(&offer.provider, current));
        if let Some(offer) = &same_provider
            && offer.loaded.as_ref() == wanted
        {
            return Arc::clone(offer);
        }
        let (system, visible_names) = match &same_provider {
            Some(offer) => (Arc::clone(&offer.system), None),
            None => self.render_system(provider, scope),
        };
        let tools = self.render_tools(provider, scope, loaded, visible_names.as_deref());
        let offer = Arc::new(RoundOffer {
            provider: Arc::clone(current),
            loaded: wanted.cloned(),
            names: tools.iter().map(|tool| tool.name.clone()).collect(),
            system,
            tools,
        });
        if reusable && let Ok(mut last) = self.last_offer.lock() {
            *last = Some(Arc::clone(&offer));
        }
        offer
    }

    /// Render the system prompt; with a sub-agent's scope, also the names of the skills it
    /// lists.
    pub(super) fn render_system(
        &self,
        provider: &SkillsProvider,
        scope: &Scope,
    ) -> (Arc<str>, Option<Vec<String>>) {
        let format = self.options.prompt_format;
        let (section, visible_names) = if scope.allowed.is_some() {
            let visible: Vec<Arc<Skill>> = provider
                .model_skills()
                .into_iter()
                .filter(|skill| scope.allows(skill.name()))
                .collect();
            let names: Vec<String> = visible
                .iter()
                .map(|skill| skill.name().to_owned())
                .collect();
            (provider.system_prompt_for(&visible, format), Some(names))
        } else {
            (provider.system_prompt(format), None)
        };
        let mut system = self.options.base_prompt.clone();
        if !section.is_empty() {
            if !system.is_empty() {
                system.push_str("\n\n");
            }
            system.push_str(&section);
        }
        if self.options.tools_on_load {
            system.push_str(
                "\n\nA skill's own tools become available after you load it with load_skill.",
            );
        }
        (Arc::from(system), visible_names)
    }

    /// Render the tools offered: `load_skill` naming `visible_names` when given, and the
    /// skills' own tools within the scope (in tools-on-load mode, of the `loaded` skills).
    pub(super) fn render_tools(
        &self,
        provider: &SkillsProvider,
        scope: &Scope,
        loaded: &BTreeSet<String>,
        visible_names: Option<&[String]>,
    ) -> Vec<ToolSpec> {
        let visible: Option<Vec<&str>> =
            visible_names.map(|names| names.iter().map(String::as_str).collect());
        registry::offered(provider, Offer::Profile(ToolProfile::Skills))
            .iter()
            .filter_map(|tool| match tool.owner() {
                Some(owner) => (scope.allows(owner.name())
                    && (!self.options.tools_on_load || loaded.contains(owner.name())))
                .then(|| tool.spec(provider)),
                None => Some(tool.spec_within(provider, visible.as_deref())),
            })
            .collect()
    }
}

/// `offer` with the tools of the MCP servers the conversation holds after the rest (one
/// whose name another tool has is left out). The servers change with the conversation, so
/// this part is never kept between conversations.
pub(super) fn with_server_tools(offer: Arc<RoundOffer>, servers: &ServerHolds) -> Arc<RoundOffer> {
    if servers.is_empty() {
        return offer;
    }
    let held: Vec<ToolSpec> =
        registry::held_server_tools(Offer::Profile(ToolProfile::Skills), servers)
            .iter()
            .map(|tool| tool.spec(&offer.provider))
            .collect();
    if held.is_empty() {
        return offer;
    }
    let tools = registry::with_held_server_tools(&offer.tools, held, |spec| spec.name.as_str());
    let names = tools.iter().map(|spec| spec.name.clone()).collect();
    Arc::new(RoundOffer {
        provider: Arc::clone(&offer.provider),
        loaded: offer.loaded.clone(),
        system: Arc::clone(&offer.system),
        tools,
        names,
    })
}
