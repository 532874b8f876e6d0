//! The catalog pages: the skills list (filtered and paged on the server, so 10,000 skills cost
//! one page of rows), one skill as its author and a model see it, the file viewer, raw files,
//! and the event stream that tells open pages the catalog was reloaded.
//!
//! One page per file: the skills list (`skills_list`), one skill (`skill_page`), one file
//! (`file_page`), a file's bytes (`raw_file`), and the catalog's change events
//! (`catalog_events`); the rows the list and the skill page share are in `rows`, and finding the
//! skill a page is about in `skill_lookup`.

mod catalog_events;
mod file_page;
mod raw_file;
mod rows;
mod skill_lookup;
mod skill_page;
mod skills_list;

pub(crate) use catalog_events::catalog_events;
pub(crate) use file_page::file_page;
pub(crate) use raw_file::raw_file;
pub(crate) use skill_page::skill_page;
pub(crate) use skills_list::skills_page;
