//! Named limits of the tool loop, each with the reason for its number.

/// How long a toolset stays active after the last call of one of its tools
/// (seed §5: 10 minutes); `LoopConfig::toolset_idle_ms` overrides it.
pub const DEFAULT_TOOLSET_IDLE_MS: u64 = 10 * 60 * 1000;

/// Model calls that may end in a tool call within one user turn. The longest
/// seed scenario (read_skill → enable → search → info → play → answer) needs 6;
/// 8 leaves slack and still stops a small model that loops within seconds.
pub const MAX_TOOL_ROUNDS: u32 = 8;

/// A tool result longer than this is cut (about 1,500 tokens): one result must
/// not crowd out the rest of an 8k-token context of a small model.
pub const MAX_TOOL_RESULT_CHARS: usize = 6_000;

/// A `SKILL.md` larger than this is skipped: `read_skill` puts the whole body
/// into the history, and 32 KiB (about 8k tokens) is a small model's context.
pub const MAX_SKILL_FILE_BYTES: u64 = 32 * 1024;

/// A `SKILL.md` front matter (the YAML between the `---` lines) longer than
/// this is refused before it is parsed: the fields we read fit in a few
/// hundred bytes, and the YAML parser's time grows with the square of the
/// nesting (32 KiB of `[` took 3 s and 5 MB to refuse; issue 46, the
/// `skill_md` fuzz target), so 4 KiB keeps a hostile file to milliseconds.
pub const MAX_SKILL_FRONT_MATTER_BYTES: usize = 4 * 1024;

/// A `read_skill` result is cut only past this: the longest body a skill file
/// may hold (its bytes are at least its characters), so a recipe that loads
/// is read to its end.
pub const MAX_SKILL_RESULT_CHARS: usize = MAX_SKILL_FILE_BYTES as usize;

/// The skill description is one index line in every prompt; 200 characters is
/// about 50 tokens, the most one trigger line may cost (seed §10).
pub const MAX_SKILL_DESCRIPTION_CHARS: usize = 200;

/// Skill names follow the public Agent Skills convention: at most 64 characters.
pub const MAX_SKILL_NAME_CHARS: usize = 64;

/// Toolset names are routing prefixes shown on every catalogue line; 32 is
/// plenty for a word and keeps tool names short.
pub const MAX_TOOLSET_NAME_CHARS: usize = 32;
