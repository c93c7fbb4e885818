//! The `process` set's texts, and the result texts its runs leave in
//! `process_log.result`.

use porfiry_skills::Language;

use super::pick;

/// Catalogue line of the `process` set.
pub fn process_summary(lang: Language) -> &'static str {
    pick(
        lang,
        "external processes: list, start (allowed programs only), fetch (allowed URLs, feeds), stop, mark, clean up",
        "внешние процессы: список, запуск (только разрешённые программы), загрузка (разрешённые URL, ленты), остановка, пометка, очистка",
    )
}

/// `process_list` description.
pub fn process_list_desc(lang: Language) -> &'static str {
    pick(
        lang,
        "list processes: open (not closed, default) or all",
        "список процессов: open (не закрытые, по умолчанию) или all",
    )
}

/// `process_start` description.
pub fn process_start_desc(lang: Language) -> &'static str {
    pick(
        lang,
        "run a program with arguments (no shell); its result lands in process_list",
        "запустить программу с аргументами (без shell); результат появится в process_list",
    )
}

/// `process_fetch` description.
pub fn process_fetch_desc(lang: Language) -> &'static str {
    pick(
        lang,
        "fetch a page or an RSS/Atom feed (allowed URLs only); its text lands in process_list",
        "загрузить страницу или ленту RSS/Atom (только разрешённые URL); текст появится в process_list",
    )
}

/// `process_fetch` while the URL allow-list is empty.
pub fn fetch_allow_empty(lang: Language, key: &str) -> String {
    match lang {
        Language::En => format!(
            "refused: no URL is allowed to be fetched. The user allows URL prefixes in config key \
             {key} (a JSON array such as [\"https://example.org/feed\"])"
        ),
        Language::Ru => format!(
            "отказано: ни один URL не разрешён. Пользователь разрешает префиксы URL в ключе \
             конфигурации {key} (JSON-массив вроде [\"https://example.org/feed\"])"
        ),
    }
}

/// `process_fetch` of something that is not an http(s) URL.
pub fn fetch_bad_url(lang: Language, url: &str, why: &str) -> String {
    match lang {
        Language::En => format!("refused: {url:?} is not an http(s) URL ({why})"),
        Language::Ru => format!("отказано: {url:?} не URL http(s) ({why})"),
    }
}

/// `process_fetch` of a URL no allowed prefix covers.
pub fn fetch_not_allowed(lang: Language, url: &str, allowed: &str, key: &str) -> String {
    match lang {
        Language::En => {
            format!("refused: {url} is not under a URL in config key {key}; allowed: {allowed}")
        }
        Language::Ru => format!(
            "отказано: {url} не входит ни в один URL ключа конфигурации {key}; разрешены: {allowed}"
        ),
    }
}

/// `process_fetch` started.
pub fn fetch_started(lang: Language, id: i64, url: &str) -> String {
    match lang {
        Language::En => {
            format!("process #{id} fetches {url}; its text will appear in process_list")
        }
        Language::Ru => format!("процесс #{id} загружает {url}; текст появится в process_list"),
    }
}

/// A fetch that failed (stored as the row's result).
pub fn fetch_failed(lang: Language, detail: &str) -> String {
    match lang {
        Language::En => format!("fetch failed: {detail}"),
        Language::Ru => format!("загрузка не удалась: {detail}"),
    }
}

/// Said after a fetched text whose body was cut.
pub fn fetch_cut(lang: Language, max_bytes: usize) -> String {
    match lang {
        Language::En => format!("(only the first {max_bytes} bytes were read)"),
        Language::Ru => format!("(прочитаны только первые {max_bytes} байт)"),
    }
}

/// `process_stop` description.
pub fn process_stop_desc(lang: Language) -> &'static str {
    pick(
        lang,
        "stop a running process or llm_task by id",
        "остановить идущий процесс или llm_task по id",
    )
}

/// `process_mark` description.
pub fn process_mark_desc(lang: Language) -> &'static str {
    pick(
        lang,
        "set a process's status; close = handled, hidden from context",
        "задать статус процесса; close = обработан, скрыть из контекста",
    )
}

/// `process_cleanup` description.
pub fn process_cleanup_desc(lang: Language) -> &'static str {
    pick(
        lang,
        "delete closed processes (optionally only those older than N seconds)",
        "удалить закрытые процессы (можно только старше N секунд)",
    )
}

/// `process_list` found nothing.
pub fn process_none(lang: Language) -> &'static str {
    pick(lang, "no processes", "процессов нет")
}

/// A running job in a list line.
pub fn process_running(lang: Language) -> &'static str {
    pick(lang, "running", "выполняется")
}

/// `process_start` with an empty or badly quoted command.
pub fn process_bad_command(lang: Language, command: &str) -> String {
    match lang {
        Language::En => format!(
            "cannot read the command {command:?}: give a program and its arguments, quotes closed"
        ),
        Language::Ru => format!(
            "не могу разобрать команду {command:?}: нужна программа и аргументы, кавычки закрыты"
        ),
    }
}

/// `process_start` while the allow-list is empty.
pub fn process_allow_empty(lang: Language, key: &str) -> String {
    match lang {
        Language::En => format!(
            "refused: no program is allowed to run. The user allows programs in config key {key} \
             (a JSON array of program names)"
        ),
        Language::Ru => format!(
            "отказано: ни одна программа не разрешена. Пользователь разрешает программы в ключе \
             конфигурации {key} (JSON-массив имён программ)"
        ),
    }
}

/// `process_start` of a program not on the allow-list.
pub fn process_not_allowed(lang: Language, program: &str, allowed: &str, key: &str) -> String {
    match lang {
        Language::En => {
            format!("refused: {program:?} is not in config key {key}; allowed: {allowed}")
        }
        Language::Ru => {
            format!("отказано: {program:?} нет в ключе конфигурации {key}; разрешены: {allowed}")
        }
    }
}

/// `process_start` while the most processes already run.
pub fn process_busy(lang: Language, max: usize) -> String {
    match lang {
        Language::En => {
            format!("refused: {max} processes already run; wait for one or stop one")
        }
        Language::Ru => {
            format!("отказано: уже идут {max} процесса(ов); дождись или останови один")
        }
    }
}

/// The program could not be started (stored as the row's result too).
pub fn process_spawn_failed(lang: Language, program: &str, error: &str) -> String {
    match lang {
        Language::En => format!("cannot start {program:?}: {error}"),
        Language::Ru => format!("не удалось запустить {program:?}: {error}"),
    }
}

/// `process_start` started it.
pub fn process_started(lang: Language, id: i64, program: &str) -> String {
    match lang {
        Language::En => {
            format!("process #{id} ({program}) started; its result will appear in process_list")
        }
        Language::Ru => {
            format!("процесс #{id} ({program}) запущен; результат появится в process_list")
        }
    }
}

/// `process_stop` asked it to stop.
pub fn process_stopping(lang: Language, id: i64) -> String {
    match lang {
        Language::En => format!("process #{id} is being stopped"),
        Language::Ru => format!("процесс #{id} останавливается"),
    }
}

/// `process_stop` of a row this node runs nothing for.
pub fn process_not_running(lang: Language, id: i64) -> String {
    match lang {
        Language::En => format!("process #{id} is not running here; see process_list"),
        Language::Ru => format!("процесс #{id} здесь не выполняется; см. process_list"),
    }
}

/// `process_mark` with a status that is not one of the seed's.
pub fn process_bad_status(lang: Language, status: &str) -> String {
    match lang {
        Language::En => {
            format!("unknown status {status:?}: ok, warning, error, timeout, offline or close")
        }
        Language::Ru => {
            format!("неизвестный статус {status:?}: ok, warning, error, timeout, offline или close")
        }
    }
}

/// `process_mark` of a job still running.
pub fn process_mark_running(lang: Language, id: i64) -> String {
    match lang {
        Language::En => format!("process #{id} is still running; stop it first (process_stop)"),
        Language::Ru => {
            format!("процесс #{id} ещё выполняется; сначала останови его (process_stop)")
        }
    }
}

/// `process_mark` done.
pub fn process_marked(lang: Language, id: i64, status: &str) -> String {
    match lang {
        Language::En => format!("process #{id} marked {status}"),
        Language::Ru => format!("процесс #{id} помечен как {status}"),
    }
}

/// An id with no row.
pub fn process_no_id(lang: Language, id: i64) -> String {
    match lang {
        Language::En => format!("no process #{id}; see process_list|all"),
        Language::Ru => format!("процесса #{id} нет; см. process_list|all"),
    }
}

/// `process_cleanup` with a negative age.
pub fn process_bad_age(lang: Language, secs: i64) -> String {
    match lang {
        Language::En => format!("older_than_secs must be 0 or more, got {secs}"),
        Language::Ru => format!("older_than_secs должно быть 0 или больше, получено {secs}"),
    }
}

/// `process_cleanup` done.
pub fn process_cleaned(lang: Language, n: usize) -> String {
    match lang {
        Language::En => format!("{n} closed process(es) deleted"),
        Language::Ru => format!("удалено закрытых процессов: {n}"),
    }
}

/// The first line of a finished program's result.
pub fn process_exit(lang: Language, code: Option<i32>) -> String {
    match (lang, code) {
        (Language::En, Some(c)) => format!("exit code {c}"),
        (Language::En, None) => "ended by a signal".to_owned(),
        (Language::Ru, Some(c)) => format!("код выхода {c}"),
        (Language::Ru, None) => "завершён сигналом".to_owned(),
    }
}

/// Waiting for the program failed.
pub fn process_wait_failed(lang: Language, error: &str) -> String {
    match lang {
        Language::En => format!("lost track of the process: {error}"),
        Language::Ru => format!("процесс потерян: {error}"),
    }
}

/// The program ran past its timeout and was killed.
pub fn process_timed_out(lang: Language, secs: u64) -> String {
    match lang {
        Language::En => format!("no exit within {secs} s; killed"),
        Language::Ru => format!("не завершился за {secs} с; остановлен принудительно"),
    }
}

/// The job was stopped by `process_stop`.
pub fn process_stopped(lang: Language) -> &'static str {
    pick(
        lang,
        "stopped by process_stop",
        "остановлен через process_stop",
    )
}

/// An output was longer than the cap.
pub fn process_output_cut(lang: Language, stream: &str, cap: usize, total: usize) -> String {
    match lang {
        Language::En => format!("[{stream} cut: first {cap} of {total} bytes kept]"),
        Language::Ru => format!("[{stream} обрезан: сохранены первые {cap} из {total} байт]"),
    }
}

/// A row left running when the node stopped.
pub fn process_orphaned(lang: Language) -> &'static str {
    pick(
        lang,
        "the node stopped while this ran; its outcome is unknown",
        "узел остановился, пока это выполнялось; результат неизвестен",
    )
}

#[cfg(test)]
mod tests {
    use porfiry_skills::texts::check_translations;

    use super::*;

    fn every_text(lang: Language) -> Vec<(&'static str, String)> {
        vec![
            ("process_summary", process_summary(lang).to_owned()),
            ("process_list_desc", process_list_desc(lang).to_owned()),
            ("process_start_desc", process_start_desc(lang).to_owned()),
            ("process_fetch_desc", process_fetch_desc(lang).to_owned()),
            ("fetch_allow_empty", fetch_allow_empty(lang, "k")),
            ("fetch_bad_url", fetch_bad_url(lang, "x", "why")),
            ("fetch_not_allowed", fetch_not_allowed(lang, "u", "a", "k")),
            ("fetch_started", fetch_started(lang, 1, "u")),
            ("fetch_failed", fetch_failed(lang, "d")),
            ("fetch_cut", fetch_cut(lang, 9)),
            ("process_stop_desc", process_stop_desc(lang).to_owned()),
            ("process_mark_desc", process_mark_desc(lang).to_owned()),
            (
                "process_cleanup_desc",
                process_cleanup_desc(lang).to_owned(),
            ),
            ("process_none", process_none(lang).to_owned()),
            ("process_running", process_running(lang).to_owned()),
            ("process_bad_command", process_bad_command(lang, "'x")),
            (
                "process_allow_empty",
                process_allow_empty(lang, "process.allow"),
            ),
            (
                "process_not_allowed",
                process_not_allowed(lang, "rm", "echo", "process.allow"),
            ),
            ("process_busy", process_busy(lang, 4)),
            (
                "process_spawn_failed",
                process_spawn_failed(lang, "x", "no such file"),
            ),
            ("process_started", process_started(lang, 3, "echo")),
            ("process_stopping", process_stopping(lang, 3)),
            ("process_not_running", process_not_running(lang, 3)),
            ("process_bad_status", process_bad_status(lang, "done")),
            ("process_mark_running", process_mark_running(lang, 3)),
            ("process_marked", process_marked(lang, 3, "close")),
            ("process_no_id", process_no_id(lang, 3)),
            ("process_bad_age", process_bad_age(lang, -1)),
            ("process_cleaned", process_cleaned(lang, 2)),
            (
                "process_exit",
                format!(
                    "{} / {}",
                    process_exit(lang, Some(1)),
                    process_exit(lang, None)
                ),
            ),
            ("process_wait_failed", process_wait_failed(lang, "gone")),
            ("process_timed_out", process_timed_out(lang, 300)),
            ("process_stopped", process_stopped(lang).to_owned()),
            (
                "process_output_cut",
                process_output_cut(lang, "stdout", 10, 99),
            ),
            ("process_orphaned", process_orphaned(lang).to_owned()),
        ]
    }

    #[test]
    fn every_text_differs_between_languages() {
        assert_eq!(
            check_translations(
                &every_text(Language::En),
                &every_text(Language::Ru),
                include_str!("process.rs"),
            ),
            Ok(())
        );
    }
}
