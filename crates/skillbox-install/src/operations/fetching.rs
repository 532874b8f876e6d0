//! Fetching a source into a private staging folder (a folder, an archive, a git repository, a
//! `.well-known` index), once per operation, and finding its skills; a git source's chosen
//! skills are written whole only when chosen.

use super::*;

impl Installer {
    /// Fetch a source (once per operation: later asks for the same source and reference get
    /// the same tree) into a staging folder.
    pub(super) fn fetch_tree(
        &self,
        spec: &SourceSpec,
        wanted: &[String],
    ) -> Result<Rc<FetchedTree>, InstallError> {
        let key = format!(
            "{}\0{}\0{}",
            spec.text,
            spec.reference.as_deref().unwrap_or_default(),
            wanted.join(",")
        );
        if let Some(tree) = self.fetched.borrow().get(&key) {
            return Ok(Rc::clone(tree));
        }
        let tree = Rc::new(self.fetch_tree_now(spec, wanted)?);
        self.fetched.borrow_mut().insert(key, Rc::clone(&tree));
        Ok(tree)
    }

    pub(super) fn fetch_tree_now(
        &self,
        spec: &SourceSpec,
        wanted: &[String],
    ) -> Result<FetchedTree, InstallError> {
        match &spec.location {
            Location::Path(path) => {
                let metadata = fs_err::metadata(path).map_err(|error| {
                    InstallError::fetch(&spec.text, format!("it cannot be read ({error})"))
                })?;
                if metadata.is_dir() {
                    return Ok(FetchedTree::plain(
                        path.clone(),
                        SourceKind::Path,
                        None,
                        None,
                    ));
                }
                let bytes = read_bounded(path, self.limits.max_download_bytes)?;
                let revision = crate::fetch::http::sha256_digest(&bytes);
                self.unpacked(
                    spec,
                    &bytes,
                    &path.to_string_lossy(),
                    SourceKind::Path,
                    revision,
                )
            }
            Location::Archive(url) => {
                let bytes = self.http()?.get_existing(
                    url,
                    self.limits.max_download_bytes,
                    &self.progress,
                )?;
                let revision = crate::fetch::http::sha256_digest(&bytes);
                self.unpacked(spec, &bytes, url, SourceKind::Archive, revision)
            }
            Location::Git(url) => self.fetch_git(spec, url),
            Location::WellKnown(url) => {
                let index = fetch_index(self.http()?, url, &self.progress)?.ok_or_else(|| {
                    InstallError::NotFound {
                        message: format!("there is no discovery index at `{url}`"),
                    }
                })?;
                self.fetch_from_index(spec, &index, wanted)
            }
            Location::Site(site) => {
                let index_url = format!(
                    "{}/{WELL_KNOWN_PATH}/index.json",
                    site.trim_end_matches('/')
                );
                match fetch_index(self.http()?, &index_url, &self.progress)? {
                    Some(index) => self.fetch_from_index(spec, &index, wanted),
                    None => self.fetch_git(spec, site),
                }
            }
        }
    }

    /// Fetch a source and find all its skills (only the `wanted` ones for an index, whose
    /// listing needs no download).
    pub(super) fn fetch(
        &self,
        spec: &SourceSpec,
        wanted: &[String],
    ) -> Result<Fetched, InstallError> {
        let tree = self.fetch_tree(spec, wanted)?;
        let skills = self.skills_in(&tree, spec, "")?;
        Ok(Fetched {
            skills,
            notes: tree.notes.clone(),
        })
    }

    /// The skills of a fetched tree below `relative` (a path inside the tree).
    pub(super) fn skills_in(
        &self,
        tree: &Rc<FetchedTree>,
        spec: &SourceSpec,
        relative: &str,
    ) -> Result<Vec<Prepared>, InstallError> {
        let start = if relative.is_empty() {
            tree.root.clone()
        } else {
            tree.root.join(relative)
        };
        let mut found = find_skills_with(&start, &tree.root, &spec.text, tree.git.is_none())?;
        let mut prepared = Vec::with_capacity(found.len());
        for skill in found.drain(..) {
            let (spec, revision) = match &tree.index_skills {
                Some(index) => {
                    let Some((index_url, revision)) = index.get(&skill.name) else {
                        continue;
                    };
                    (
                        SourceSpec {
                            location: Location::WellKnown(index_url.clone()),
                            ..spec.clone()
                        },
                        revision.clone(),
                    )
                }
                None => (spec.clone(), tree.revision.clone()),
            };
            let mut skill = skill;
            skill.path_in_source = join_path(&tree.prefix, &skill.path_in_source);
            prepared.push(Prepared {
                found: skill,
                kind: tree.kind,
                spec,
                revision,
                staging_guard: tree.staging.clone(),
                outline_of: tree.git.as_ref().map(|_| Rc::clone(tree)),
                in_store: false,
            });
        }
        Ok(prepared)
    }

    /// A chosen skill with all its files: one found in a git source's outline gets its folder
    /// written whole (beside the outline) and validated; others are complete already.
    pub(super) fn complete(&self, prepared: Prepared) -> Result<Prepared, InstallError> {
        let Some(tree) = prepared.outline_of.clone() else {
            return Ok(prepared);
        };
        let Some(git) = &tree.git else {
            return Ok(prepared);
        };
        // A tree the store holds already needs no copy: its digest is told from the
        // repository's objects, and the stored tree is validated as a fetched one is.
        let stored = folder_digest(
            &git.repository,
            &git.revision,
            &prepared.found.path_in_source,
            &self.limits,
        )
        .and_then(|digest| self.store().ok()?.existing(&digest));
        if let Some(stored) = stored {
            let base = stored
                .parent()
                .map_or_else(|| stored.clone(), Path::to_path_buf);
            let found = find_skills(&stored, &base, &prepared.spec.text)?;
            if let Some(found) = found
                .into_iter()
                .find(|found| found.name == prepared.found.name && found.folder == stored)
            {
                return Ok(Prepared {
                    found: FoundSkill {
                        path_in_source: prepared.found.path_in_source.clone(),
                        ..found
                    },
                    outline_of: None,
                    in_store: true,
                    ..prepared
                });
            }
        }
        let number = self
            .completed
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let base = tree.root.with_file_name(format!("whole-{number}"));
        let folder = base.join("skill");
        fs_err::create_dir_all(&folder)
            .map_err(|error| InstallError::io("create", &folder, error))?;
        write_folder(
            &git.repository,
            &git.revision,
            &prepared.found.path_in_source,
            &folder,
            &git.url,
            &self.limits,
        )?;
        let found = find_skills(&folder, &base, &prepared.spec.text)?;
        let Some(found) = found
            .into_iter()
            .find(|found| found.name == prepared.found.name && found.folder == folder)
        else {
            return Err(InstallError::NotFound {
                message: format!(
                    "`{}` at `{}` is not the skill `{}` its SKILL.md names",
                    prepared.spec.text, prepared.found.path_in_source, prepared.found.name
                ),
            });
        };
        Ok(Prepared {
            found: FoundSkill {
                path_in_source: prepared.found.path_in_source.clone(),
                ..found
            },
            outline_of: None,
            ..prepared
        })
    }

    pub(super) fn fetch_git(
        &self,
        spec: &SourceSpec,
        url: &str,
    ) -> Result<FetchedTree, InstallError> {
        let staging = self.staging()?;
        let root = staging.path().join("tree");
        fs_err::create_dir(&root).map_err(|error| InstallError::io("create", &root, error))?;
        let source = GitSource {
            url,
            reference: spec.reference.as_deref(),
            subpath: &spec.subpath,
            outline: TreeOutline::SkillFilesOnly,
        };
        let fetched = fetch_tree(&source, staging.path(), &root, &self.limits, &self.progress)?;
        let notes = fetched
            .skipped_submodules
            .iter()
            .map(|path| {
                format!(
                    "`{}` in `{}` is a submodule; submodules are not installed",
                    join_path(&spec.subpath, path),
                    spec.text
                )
            })
            .collect();
        Ok(FetchedTree {
            root,
            prefix: spec.subpath.clone(),
            kind: SourceKind::Git,
            git: (fetched.outline == TreeOutline::SkillFilesOnly).then(|| FetchedRepository {
                url: url.to_owned(),
                repository: fetched.repository,
                revision: fetched.revision.clone(),
            }),
            revision: Some(fetched.revision),
            index_skills: None,
            notes,
            staging: Some(Arc::new(staging)),
        })
    }

    pub(super) fn unpacked(
        &self,
        spec: &SourceSpec,
        bytes: &[u8],
        name: &str,
        kind: SourceKind,
        revision: String,
    ) -> Result<FetchedTree, InstallError> {
        let format = ArchiveFormat::detect(name, bytes).ok_or_else(|| {
            InstallError::refused(
                &spec.text,
                "it is neither a folder, a zip (.zip, .skill) nor a .tar.gz archive",
            )
        })?;
        let staging = self.staging()?;
        let root = staging.path().join("tree");
        fs_err::create_dir(&root).map_err(|error| InstallError::io("create", &root, error))?;
        unpack(bytes, format, &root, &spec.text, &self.limits)?;
        Ok(FetchedTree::plain(
            root,
            kind,
            Some(revision),
            Some(staging),
        ))
    }

    pub(super) fn fetch_from_index(
        &self,
        spec: &SourceSpec,
        index: &crate::fetch::well_known::Index,
        wanted: &[String],
    ) -> Result<FetchedTree, InstallError> {
        let listed: Vec<&crate::fetch::well_known::IndexSkill> = if wanted.is_empty() {
            index.skills.iter().collect()
        } else {
            for name in wanted {
                if !index.skills.iter().any(|skill| skill.name == *name) {
                    return Err(not_in_source(
                        name,
                        &spec.text,
                        index
                            .skills
                            .iter()
                            .map(|skill| (skill.name.as_str(), skill.description.as_str())),
                    ));
                }
            }
            index
                .skills
                .iter()
                .filter(|skill| wanted.contains(&skill.name))
                .collect()
        };
        if listed.is_empty() {
            return Err(InstallError::NotFound {
                message: format!("the index `{}` lists no skills", index.url),
            });
        }
        let staging = self.staging()?;
        let mut skills = BTreeMap::new();
        for skill in listed {
            let revision = fetch_skill(
                self.http()?,
                index,
                skill,
                staging.path(),
                &self.limits,
                &self.progress,
            )?;
            let folder = staging.path().join(&skill.name);
            let found = find_skills(&folder, staging.path(), &spec.text)?;
            if found.len() != 1 || found[0].name != skill.name {
                return Err(InstallError::refused(
                    index.url.as_str(),
                    format!(
                        "the artifact of `{}` holds {} skill(s), not the one skill it names",
                        skill.name,
                        found.len()
                    ),
                ));
            }
            skills.insert(skill.name.clone(), (index.url.to_string(), revision));
        }
        Ok(FetchedTree {
            root: staging.path().to_path_buf(),
            prefix: String::new(),
            kind: SourceKind::WellKnown,
            revision: None,
            index_skills: Some(skills),
            git: None,
            notes: Vec::new(),
            staging: Some(Arc::new(staging)),
        })
    }

    /// Fetch `spec` and return its skill at `path` (as the lock or manifest names it), which
    /// must be called `name`. Only that folder of the source is looked at, so another skill
    /// of the same source that does not validate is no obstacle.
    pub(super) fn fetch_one(
        &self,
        spec: &SourceSpec,
        path: &str,
        name: &str,
    ) -> Result<Prepared, InstallError> {
        crate::guard::check_source_path(path).map_err(|message| InstallError::BadSource {
            source_text: spec.text.clone(),
            message,
        })?;
        let wanted = vec![name.to_owned()];
        let wanted = if matches!(spec.location, Location::WellKnown(_) | Location::Site(_)) {
            wanted.as_slice()
        } else {
            &[]
        };
        let tree = self.fetch_tree(spec, wanted)?;
        let relative = if tree.index_skills.is_some() {
            name.to_owned()
        } else if path.is_empty() {
            String::new()
        } else if tree.prefix.is_empty() {
            path.to_owned()
        } else {
            path.strip_prefix(&format!("{}/", tree.prefix))
                .map(str::to_owned)
                .or_else(|| (path == tree.prefix).then(String::new))
                .unwrap_or_else(|| path.to_owned())
        };
        let missing = || InstallError::NotFound {
            message: format!(
                "`{}` no longer holds skill `{name}`{}",
                spec.text,
                if path.is_empty() {
                    String::new()
                } else {
                    format!(" at `{path}`")
                }
            ),
        };
        if !relative.is_empty() && !tree.root.join(&relative).is_dir() {
            return Err(missing());
        }
        let mut matching: Vec<Prepared> = self
            .skills_in(&tree, spec, &relative)?
            .into_iter()
            .filter(|prepared| prepared.found.name == name)
            .collect();
        self.complete(matching.pop().ok_or_else(missing)?)
    }
}

pub(super) fn read_bounded(path: &Path, limit: u64) -> Result<Vec<u8>, InstallError> {
    let file = skillbox_core::source::open_regular_file(path)
        .map_err(|error| InstallError::fetch(path.display().to_string(), error))?;
    let mut bytes = Vec::new();
    std::io::Read::read_to_end(&mut std::io::Read::take(file, limit + 1), &mut bytes)
        .map_err(|error| InstallError::io("read", path, error))?;
    if bytes.len() as u64 > limit {
        return Err(InstallError::refused(
            path.display().to_string(),
            format!("it is larger than {limit} bytes"),
        ));
    }
    Ok(bytes)
}

pub(super) fn join_path(base: &str, relative: &str) -> String {
    match (base.is_empty(), relative.is_empty()) {
        (true, _) => relative.to_owned(),
        (_, true) => base.to_owned(),
        _ => format!("{base}/{relative}"),
    }
}
