//! The pages' words in each language, and dates, times and numbers written as people of that
//! language write them: month and weekday names come from chrono's locale data (the glibc
//! locales), the order of their parts from the patterns here, numbers' separators from
//! ICU4X's (CLDR's) data.

use crate::model::Language;
use crate::values::cost::Cost;
use crate::values::recurrence::{End, Every, Summary};
use chrono::{Locale, NaiveDate, NaiveDateTime, NaiveTime};
use icu_decimal::input::Decimal;
use icu_decimal::DecimalFormatter;
use std::str::FromStr;

thread_local! {
    /// Each language's number formatter, in the order of [`Language::ALL`] (per thread: ICU4X's
    /// data is not shared between threads without its `sync` feature).
    static NUMBERS: Vec<DecimalFormatter> = Language::ALL
        .iter()
        .map(|language| {
            let locale = icu_locale_core::Locale::from_str(PageLocale::of(*language).html_lang())
                .expect("the pages' languages are valid locales");
            DecimalFormatter::try_new(locale.into(), Default::default())
                .expect("ICU4X's compiled data has every page language")
        })
        .collect();
}

/// Every interface string of the pages, in one language.
pub(crate) struct Texts {
    pub lang_name: &'static str,
    pub skip: &'static str,
    pub calendar_nav: &'static str,
    pub events: &'static str,
    pub search_label: &'static str,
    pub search_button: &'static str,
    pub view_label: &'static str,
    pub date_label: &'static str,
    pub list: &'static str,
    pub month: &'static str,
    pub week: &'static str,
    pub day: &'static str,
    pub today: &'static str,
    pub category_label: &'static str,
    pub all_categories: &'static str,
    pub organizer_label: &'static str,
    pub all_venues: &'static str,
    pub all_organizers: &'static str,
    pub featured_only: &'static str,
    pub featured: &'static str,
    pub prev_month: &'static str,
    pub next_month: &'static str,
    pub prev_week: &'static str,
    pub next_week: &'static str,
    pub prev_day: &'static str,
    pub next_day: &'static str,
    pub prev_page: &'static str,
    pub next_page: &'static str,
    pub no_events_month: &'static str,
    pub no_events_week: &'static str,
    pub no_events_day: &'static str,
    pub no_events_upcoming: &'static str,
    pub no_events_found: &'static str,
    /// `{n}` and `{total}`: a day with more events than its view lists.
    pub day_truncated: &'static str,
    /// `{n}`: how many more.
    pub more: &'static str,
    /// `{n}` and `{date}`: the accessible name of a "+ N more" link.
    pub more_on: &'static str,
    pub all_day: &'static str,
    pub next_day_suffix: &'static str,
    pub subscribe: &'static str,
    pub google_calendar: &'static str,
    pub icalendar: &'static str,
    pub outlook_365: &'static str,
    pub outlook_live: &'static str,
    pub download_ics: &'static str,
    pub add_to_calendar: &'static str,
    /// Heading of the other dates of a recurring event.
    pub next_dates: &'static str,
    pub venue: &'static str,
    pub organizers: &'static str,
    pub cost: &'static str,
    pub free: &'static str,
    pub website: &'static str,
    pub phone: &'static str,
    pub email: &'static str,
    pub categories: &'static str,
    pub tags: &'static str,
    pub view_map: &'static str,
    pub upcoming_events: &'static str,
    pub prev_event: &'static str,
    pub next_event: &'static str,
    pub language_label: &'static str,
    pub protected: &'static str,
    pub password: &'static str,
    pub open: &'static str,
    pub wrong_password: &'static str,
    pub not_found_title: &'static str,
    pub not_found_text: &'static str,
    pub see_upcoming: &'static str,
    /// `{query}`.
    pub results_for: &'static str,
    pub remove_filter: &'static str,
    /// `{date}`.
    pub week_of: &'static str,
    /// `{name}`.
    pub events_at: &'static str,
    /// `{name}`.
    pub events_by: &'static str,
    /// `{n}`.
    pub page_n: &'static str,
    pub page_nav: &'static str,
    pub all_events_of_venue: &'static str,
    pub all_events_of_organizer: &'static str,
}

const EN: Texts = Texts {
    lang_name: "English",
    skip: "Skip to content",
    calendar_nav: "Calendar",
    events: "Events",
    search_label: "Search events",
    search_button: "Find events",
    view_label: "View",
    date_label: "Date",
    list: "List",
    month: "Month",
    week: "Week",
    day: "Day",
    today: "Today",
    category_label: "Category",
    all_categories: "All categories",
    organizer_label: "Organizer",
    all_venues: "All venues",
    all_organizers: "All organizers",
    featured_only: "Featured only",
    featured: "Featured",
    prev_month: "Previous month",
    next_month: "Next month",
    prev_week: "Previous week",
    next_week: "Next week",
    prev_day: "Previous day",
    next_day: "Next day",
    prev_page: "Previous page",
    next_page: "Next page",
    no_events_month: "No events this month.",
    no_events_week: "No events this week.",
    no_events_day: "No events on this day.",
    no_events_upcoming: "No upcoming events.",
    no_events_found: "No events match.",
    day_truncated:
        "The first {n} of the {total} events of this day; search or filter to find the others.",
    more: "+ {n} more",
    more_on: "{n} more events on {date}",
    all_day: "All day",
    next_day_suffix: "the next day",
    subscribe: "Subscribe to calendar",
    google_calendar: "Google Calendar",
    icalendar: "iCalendar",
    outlook_365: "Outlook 365",
    outlook_live: "Outlook Live",
    download_ics: "Download .ics file",
    add_to_calendar: "Add to calendar",
    next_dates: "Next dates",
    venue: "Venue",
    organizers: "Organizers",
    cost: "Cost",
    free: "Free",
    website: "Website",
    phone: "Phone",
    email: "Email",
    categories: "Categories",
    tags: "Tags",
    view_map: "View on a map",
    upcoming_events: "Upcoming events",
    prev_event: "Previous event",
    next_event: "Next event",
    language_label: "Language",
    protected: "This event is protected by a password.",
    password: "Password",
    open: "Open",
    wrong_password: "That password is not right.",
    not_found_title: "Page not found",
    not_found_text: "Nothing is at this address.",
    see_upcoming: "See upcoming events",
    results_for: "Results for “{query}”",
    remove_filter: "Remove filter",
    week_of: "Week of {date}",
    events_at: "Events at {name}",
    events_by: "Events by {name}",
    page_n: "page {n}",
    page_nav: "Pages",
    all_events_of_venue: "All events at this venue",
    all_events_of_organizer: "All events of this organizer",
};

const PT_BR: Texts = Texts {
    lang_name: "Português (Brasil)",
    skip: "Pular para o conteúdo",
    calendar_nav: "Calendário",
    events: "Eventos",
    search_label: "Buscar eventos",
    search_button: "Buscar",
    view_label: "Visualização",
    date_label: "Data",
    list: "Lista",
    month: "Mês",
    week: "Semana",
    day: "Dia",
    today: "Hoje",
    category_label: "Categoria",
    all_categories: "Todas as categorias",
    organizer_label: "Organização",
    all_venues: "Todos os locais",
    all_organizers: "Todas as organizações",
    featured_only: "Só destaques",
    featured: "Destaque",
    prev_month: "Mês anterior",
    next_month: "Próximo mês",
    prev_week: "Semana anterior",
    next_week: "Próxima semana",
    prev_day: "Dia anterior",
    next_day: "Próximo dia",
    prev_page: "Página anterior",
    next_page: "Próxima página",
    no_events_month: "Nenhum evento neste mês.",
    no_events_week: "Nenhum evento nesta semana.",
    no_events_day: "Nenhum evento neste dia.",
    no_events_upcoming: "Nenhum evento próximo.",
    no_events_found: "Nenhum evento encontrado.",
    day_truncated:
        "Os primeiros {n} dos {total} eventos deste dia; busque ou filtre para encontrar os outros.",
    more: "+ {n} mais",
    more_on: "Mais {n} eventos em {date}",
    all_day: "Dia inteiro",
    next_day_suffix: "do dia seguinte",
    subscribe: "Assinar o calendário",
    google_calendar: "Google Agenda",
    icalendar: "iCalendar",
    outlook_365: "Outlook 365",
    outlook_live: "Outlook Live",
    download_ics: "Baixar arquivo .ics",
    add_to_calendar: "Adicionar à agenda",
    next_dates: "Próximas datas",
    venue: "Local",
    organizers: "Organização",
    cost: "Preço",
    free: "Grátis",
    website: "Site",
    phone: "Telefone",
    email: "E-mail",
    categories: "Categorias",
    tags: "Tags",
    view_map: "Ver no mapa",
    upcoming_events: "Próximos eventos",
    prev_event: "Evento anterior",
    next_event: "Próximo evento",
    language_label: "Idioma",
    protected: "Este evento é protegido por senha.",
    password: "Senha",
    open: "Abrir",
    wrong_password: "A senha não está correta.",
    not_found_title: "Página não encontrada",
    not_found_text: "Não há nada neste endereço.",
    see_upcoming: "Ver os próximos eventos",
    results_for: "Resultados para “{query}”",
    remove_filter: "Remover filtro",
    week_of: "Semana de {date}",
    events_at: "Eventos em {name}",
    events_by: "Eventos de {name}",
    page_n: "página {n}",
    page_nav: "Páginas",
    all_events_of_venue: "Todos os eventos neste local",
    all_events_of_organizer: "Todos os eventos desta organização",
};

const ES: Texts = Texts {
    lang_name: "Español",
    skip: "Saltar al contenido",
    calendar_nav: "Calendario",
    events: "Eventos",
    search_label: "Buscar eventos",
    search_button: "Buscar",
    view_label: "Vista",
    date_label: "Fecha",
    list: "Lista",
    month: "Mes",
    week: "Semana",
    day: "Día",
    today: "Hoy",
    category_label: "Categoría",
    all_categories: "Todas las categorías",
    organizer_label: "Organización",
    all_venues: "Todos los lugares",
    all_organizers: "Todas las organizaciones",
    featured_only: "Solo destacados",
    featured: "Destacado",
    prev_month: "Mes anterior",
    next_month: "Mes siguiente",
    prev_week: "Semana anterior",
    next_week: "Semana siguiente",
    prev_day: "Día anterior",
    next_day: "Día siguiente",
    prev_page: "Página anterior",
    next_page: "Página siguiente",
    no_events_month: "No hay eventos este mes.",
    no_events_week: "No hay eventos esta semana.",
    no_events_day: "No hay eventos este día.",
    no_events_upcoming: "No hay próximos eventos.",
    no_events_found: "Ningún evento coincide.",
    day_truncated: "Los primeros {n} de los {total} eventos de este día; busca o filtra para encontrar los demás.",
    more: "+ {n} más",
    more_on: "{n} eventos más el {date}",
    all_day: "Todo el día",
    next_day_suffix: "del día siguiente",
    subscribe: "Suscribirse al calendario",
    google_calendar: "Google Calendar",
    icalendar: "iCalendar",
    outlook_365: "Outlook 365",
    outlook_live: "Outlook Live",
    download_ics: "Descargar archivo .ics",
    add_to_calendar: "Añadir al calendario",
    next_dates: "Próximas fechas",
    venue: "Lugar",
    organizers: "Organización",
    cost: "Precio",
    free: "Gratis",
    website: "Sitio web",
    phone: "Teléfono",
    email: "Correo electrónico",
    categories: "Categorías",
    tags: "Etiquetas",
    view_map: "Ver en un mapa",
    upcoming_events: "Próximos eventos",
    prev_event: "Evento anterior",
    next_event: "Evento siguiente",
    language_label: "Idioma",
    protected: "Este evento está protegido con contraseña.",
    password: "Contraseña",
    open: "Abrir",
    wrong_password: "La contraseña no es correcta.",
    not_found_title: "Página no encontrada",
    not_found_text: "No hay nada en esta dirección.",
    see_upcoming: "Ver los próximos eventos",
    results_for: "Resultados de “{query}”",
    remove_filter: "Quitar filtro",
    week_of: "Semana del {date}",
    events_at: "Eventos en {name}",
    events_by: "Eventos de {name}",
    page_n: "página {n}",
    page_nav: "Páginas",
    all_events_of_venue: "Todos los eventos en este lugar",
    all_events_of_organizer: "Todos los eventos de esta organización",
};

/// A language's words and date patterns.
#[derive(Clone, Copy)]
pub(crate) struct PageLocale {
    pub language: Language,
    pub texts: &'static Texts,
    locale: Locale,
}

impl PageLocale {
    pub(crate) fn of(language: Language) -> PageLocale {
        let (texts, locale) = match language {
            Language::En => (&EN, Locale::en_US),
            Language::PtBr => (&PT_BR, Locale::pt_BR),
            Language::Es => (&ES, Locale::es_ES),
        };
        PageLocale {
            language,
            texts,
            locale,
        }
    }

    /// The `lang` attribute's value.
    pub(crate) fn html_lang(&self) -> &'static str {
        match self.language {
            Language::En => "en",
            Language::PtBr => "pt-BR",
            Language::Es => "es",
        }
    }

    fn format(&self, date: &NaiveDateTime, pattern: &str) -> String {
        date.and_utc()
            .format_localized(pattern, self.locale)
            .to_string()
    }

    fn date_format(&self, date: NaiveDate, pattern: &str) -> String {
        self.format(&date.and_time(NaiveTime::MIN), pattern)
    }

    /// "March 2027", "Março de 2027", "Marzo de 2027".
    pub(crate) fn month_title(&self, first: NaiveDate) -> String {
        let pattern = match self.language {
            Language::En => "%B %Y",
            _ => "%B de %Y",
        };
        capitalized(&self.date_format(first, pattern))
    }

    /// "Monday, March 15, 2027", "segunda, 15 de março de 2027".
    pub(crate) fn long_date(&self, date: NaiveDate) -> String {
        let pattern = match self.language {
            Language::En => "%A, %B %-d, %Y",
            _ => "%A, %-d de %B de %Y",
        };
        self.date_format(date, pattern)
    }

    /// "Mon, Mar 15", "seg, 15 de mar", "lun, 15 mar".
    pub(crate) fn short_date(&self, date: NaiveDate) -> String {
        let pattern = match self.language {
            Language::En => "%a, %b %-d",
            Language::PtBr => "%a, %-d de %b",
            Language::Es => "%a, %-d %b",
        };
        self.date_format(date, pattern)
    }

    /// "March 15", "15 de março".
    pub(crate) fn day_month(&self, date: NaiveDate) -> String {
        let pattern = match self.language {
            Language::En => "%B %-d",
            _ => "%-d de %B",
        };
        self.date_format(date, pattern)
    }

    /// "7:30 PM", "19:30".
    pub(crate) fn time(&self, time: NaiveDateTime) -> String {
        match self.language {
            Language::En => self.format(&time, "%-I:%M %p"),
            _ => self.format(&time, "%H:%M"),
        }
    }

    /// The weekday's full and abbreviated names.
    pub(crate) fn weekday(&self, date: NaiveDate) -> (String, String) {
        (
            capitalized(&self.date_format(date, "%A")),
            capitalized(&self.date_format(date, "%a")),
        )
    }

    /// A recurring event's rule in words: "Every week on Tuesday and Thursday, until June 30,
    /// 2027", "Todo mês na segunda terça-feira, 10 vezes", "Todos los años".
    pub(crate) fn rule(&self, rule: &Summary) -> String {
        use chrono::Weekday;
        let day_name = |w: Weekday| {
            // 2024-01-01 was a Monday.
            let monday = NaiveDate::from_ymd_opt(2024, 1, 1).expect("a date");
            self.date_format(
                monday + chrono::Duration::days(i64::from(w.num_days_from_monday())),
                "%A",
            )
        };
        let and = match self.language {
            Language::En => " and ",
            Language::PtBr => " e ",
            Language::Es => " y ",
        };
        let list = |days: &[Weekday]| {
            let names: Vec<String> = days.iter().map(|d| day_name(*d)).collect();
            match names.split_last() {
                Some((last, [])) => last.clone(),
                Some((last, rest)) => format!("{}{and}{last}", rest.join(", ")),
                None => String::new(),
            }
        };
        let n = rule.interval;
        let every = |one: &str, many: &str| {
            if n <= 1 {
                one.to_string()
            } else {
                fill(many, "n", &n.to_string())
            }
        };
        // Portuguese ordinals agree with the weekday: feminine but for sábado and domingo.
        let ordinal = |k: i16, w: Weekday| -> &'static str {
            let masculine = matches!(w, Weekday::Sat | Weekday::Sun);
            match (self.language, k, masculine) {
                (Language::En, 1, _) => "first",
                (Language::En, 2, _) => "second",
                (Language::En, 3, _) => "third",
                (Language::En, 4, _) => "fourth",
                (Language::En, -2, _) => "second to last",
                (Language::En, _, _) if k < 0 => "last",
                (Language::En, _, _) => "fifth",
                (Language::PtBr, 1, false) => "primeira",
                (Language::PtBr, 1, true) => "primeiro",
                (Language::PtBr, 2, false) => "segunda",
                (Language::PtBr, 2, true) => "segundo",
                (Language::PtBr, 3, false) => "terceira",
                (Language::PtBr, 3, true) => "terceiro",
                (Language::PtBr, 4, false) => "quarta",
                (Language::PtBr, 4, true) => "quarto",
                (Language::PtBr, -2, false) => "penúltima",
                (Language::PtBr, -2, true) => "penúltimo",
                (Language::PtBr, _, false) if k < 0 => "última",
                (Language::PtBr, _, true) if k < 0 => "último",
                (Language::PtBr, _, false) => "quinta",
                (Language::PtBr, _, true) => "quinto",
                (Language::Es, 1, _) => "primer",
                (Language::Es, 2, _) => "segundo",
                (Language::Es, 3, _) => "tercer",
                (Language::Es, 4, _) => "cuarto",
                (Language::Es, -2, _) => "penúltimo",
                (Language::Es, _, _) if k < 0 => "último",
                (Language::Es, _, _) => "quinto",
            }
        };
        let text = match (&rule.every, self.language) {
            (Every::Day, Language::En) => every("Every day", "Every {n} days"),
            (Every::Day, Language::PtBr) => every("Todos os dias", "A cada {n} dias"),
            (Every::Day, Language::Es) => every("Todos los días", "Cada {n} días"),
            (Every::Week(days), language) => {
                let head = match language {
                    Language::En => every("Every week", "Every {n} weeks"),
                    Language::PtBr => every("Toda semana", "A cada {n} semanas"),
                    Language::Es => every("Todas las semanas", "Cada {n} semanas"),
                };
                match (days.is_empty(), language) {
                    (true, _) => head,
                    (false, Language::En) => format!("{head} on {}", list(days)),
                    (false, _) => format!("{head}: {}", list(days)),
                }
            }
            (Every::MonthDay(d), language) => {
                let head = match language {
                    Language::En => every("Every month", "Every {n} months"),
                    Language::PtBr => every("Todo mês", "A cada {n} meses"),
                    Language::Es => every("Todos los meses", "Cada {n} meses"),
                };
                let day = match (language, *d) {
                    (Language::En, -1) => "on the last day".to_string(),
                    (Language::PtBr, -1) => "no último dia".to_string(),
                    (Language::Es, -1) => "el último día".to_string(),
                    (Language::En, d) => format!("on day {d}"),
                    (Language::PtBr, d) => format!("no dia {d}"),
                    (Language::Es, d) => format!("el día {d}"),
                };
                format!("{head} {day}")
            }
            (Every::MonthWeekday(k, w), language) => {
                let name = day_name(*w);
                match language {
                    Language::En => format!(
                        "{} on the {} {name}",
                        every("Every month", "Every {n} months"),
                        ordinal(*k, *w)
                    ),
                    Language::PtBr => {
                        let article = if matches!(w, Weekday::Sat | Weekday::Sun) {
                            "no"
                        } else {
                            "na"
                        };
                        format!(
                            "{} {article} {} {name}",
                            every("Todo mês", "A cada {n} meses"),
                            ordinal(*k, *w)
                        )
                    }
                    Language::Es => format!(
                        "{} el {} {name}",
                        every("Todos los meses", "Cada {n} meses"),
                        ordinal(*k, *w)
                    ),
                }
            }
            (Every::Year, Language::En) => every("Every year", "Every {n} years"),
            (Every::Year, Language::PtBr) => every("Todo ano", "A cada {n} anos"),
            (Every::Year, Language::Es) => every("Todos los años", "Cada {n} años"),
        };
        let end = match (&rule.end, self.language) {
            (End::Never, _) => String::new(),
            (End::After(n), Language::En) => format!(", {} times", self.count(*n)),
            (End::After(n), Language::PtBr) => format!(", {} vezes", self.count(*n)),
            (End::After(n), Language::Es) => format!(", {} veces", self.count(*n)),
            (End::Until(d), Language::En) => {
                format!(", until {}", self.date_format(*d, "%B %-d, %Y"))
            }
            (End::Until(d), Language::PtBr) => {
                format!(", até {}", self.date_format(*d, "%-d de %B de %Y"))
            }
            (End::Until(d), Language::Es) => {
                format!(", hasta el {}", self.date_format(*d, "%-d de %B de %Y"))
            }
        };
        format!("{text}{end}")
    }

    /// When an event happens, as people write it: one day or several, all day or from a time
    /// to another (an end after midnight, within a day, is "the next day"), and the event's
    /// zone when it is not the site's.
    pub(crate) fn event_span(
        &self,
        start: NaiveDateTime,
        end: NaiveDateTime,
        all_day: bool,
        zone: Option<&str>,
    ) -> String {
        let t = self.texts;
        let (first, last) = (start.date(), end.date().max(start.date()));
        let mut out = if all_day {
            if first == last {
                format!("{} · {}", self.long_date(first), t.all_day)
            } else {
                format!("{} – {}", self.long_date(first), self.long_date(last))
            }
        } else if first == last {
            format!(
                "{} · {} – {}",
                self.long_date(first),
                self.time(start),
                self.time(end)
            )
        } else if last == first.succ_opt().unwrap_or(last)
            && end - start < chrono::Duration::hours(24)
        {
            format!(
                "{} · {} – {} {}",
                self.long_date(first),
                self.time(start),
                self.time(end),
                t.next_day_suffix
            )
        } else {
            format!(
                "{}, {} – {}, {}",
                self.long_date(first),
                self.time(start),
                self.long_date(last),
                self.time(end)
            )
        };
        if let (Some(zone), false) = (zone, all_day) {
            out.push_str(&format!(" ({zone})"));
        }
        out
    }

    /// The time part of an event on a day of a list or a month: "7:30 PM – 9:00 PM", or
    /// "All day".
    pub(crate) fn times_on_day(
        &self,
        day: NaiveDate,
        start: NaiveDateTime,
        end: NaiveDateTime,
        all_day: bool,
    ) -> String {
        if all_day || (start.date() < day && end.date() > day) {
            return self.texts.all_day.to_string();
        }
        match (start.date() == day, end.date() == day) {
            (true, true) => format!("{} – {}", self.time(start), self.time(end)),
            (true, false) => format!("{} – {}", self.time(start), self.short_date(end.date())),
            (false, _) => format!("{} – {}", self.short_date(start.date()), self.time(end)),
        }
    }

    /// A decimal number (`1000.5`) with this language's separators (`1,000.5`, `1.000,5`);
    /// anything else as it is.
    pub(crate) fn number(&self, value: &str) -> String {
        let at = Language::ALL.iter().position(|l| *l == self.language);
        match (at, Decimal::from_str(value)) {
            (Some(at), Ok(decimal)) => NUMBERS.with(|n| n[at].format(&decimal).to_string()),
            _ => value.to_string(),
        }
    }

    /// A count, with this language's separators.
    pub(crate) fn count(&self, n: usize) -> String {
        self.number(&n.to_string())
    }

    /// A cost in this language's words and numbers (its currency symbol where it is stored).
    pub(crate) fn cost(&self, cost: &Cost) -> String {
        cost.formatted_with(|amount| self.number(amount), self.texts.free)
    }
}

/// `template` with `{name}` replaced by `value`.
pub(crate) fn fill(template: &str, name: &str, value: &str) -> String {
    template.replace(&format!("{{{name}}}"), value)
}

fn capitalized(s: &str) -> String {
    let mut chars = s.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(y: i32, m: u32, d: u32, h: u32, min: u32) -> NaiveDateTime {
        NaiveDate::from_ymd_opt(y, m, d)
            .unwrap()
            .and_hms_opt(h, min, 0)
            .unwrap()
    }

    #[test]
    fn rules_are_said_in_each_language() {
        use crate::values::recurrence::Recurrence;
        let said = |language: Language, line: &str| {
            let rule = Recurrence::parse(&[line.to_string()]).unwrap();
            let summary = rule.summary(&crate::values::timezone::Zone::Utc);
            PageLocale::of(language).rule(&summary.expect("a common form"))
        };
        let weekly = "RRULE:FREQ=WEEKLY;BYDAY=TU,TH;UNTIL=20270630T235959Z";
        assert_eq!(
            said(Language::En, weekly),
            "Every week on Tuesday and Thursday, until June 30, 2027"
        );
        assert_eq!(
            said(Language::PtBr, weekly),
            "Toda semana: terça e quinta, até 30 de junho de 2027"
        );
        assert_eq!(
            said(Language::Es, weekly),
            "Todas las semanas: martes y jueves, hasta el 30 de junio de 2027"
        );
        let monthly = "RRULE:FREQ=MONTHLY;BYDAY=2SA;COUNT=10";
        assert_eq!(
            said(Language::En, monthly),
            "Every month on the second Saturday, 10 times"
        );
        assert_eq!(
            said(Language::PtBr, monthly),
            "Todo mês no segundo sábado, 10 vezes"
        );
        assert_eq!(
            said(Language::Es, monthly),
            "Todos los meses el segundo sábado, 10 veces"
        );
        assert_eq!(
            said(Language::PtBr, "RRULE:FREQ=MONTHLY;BYDAY=-1FR"),
            "Todo mês na última sexta"
        );
        assert_eq!(
            said(Language::En, "RRULE:FREQ=DAILY;INTERVAL=2"),
            "Every 2 days"
        );
        assert_eq!(
            said(Language::Es, "RRULE:FREQ=MONTHLY;BYMONTHDAY=-1"),
            "Todos los meses el último día"
        );
        assert!(
            Recurrence::parse(&["RRULE:FREQ=MONTHLY;BYDAY=MO,TU;BYSETPOS=-1".into()])
                .unwrap()
                .summary(&crate::values::timezone::Zone::Utc)
                .is_none()
        );
    }

    #[test]
    fn dates_are_written_in_each_language() {
        let d = NaiveDate::from_ymd_opt(2027, 3, 15).unwrap();
        let en = PageLocale::of(Language::En);
        let pt = PageLocale::of(Language::PtBr);
        let es = PageLocale::of(Language::Es);
        assert_eq!(en.month_title(d), "March 2027");
        assert_eq!(pt.month_title(d), "Março de 2027");
        assert_eq!(es.month_title(d), "Marzo de 2027");
        assert_eq!(en.long_date(d), "Monday, March 15, 2027");
        assert_eq!(pt.long_date(d), "segunda, 15 de março de 2027");
        assert_eq!(es.long_date(d), "lunes, 15 de marzo de 2027");
        assert_eq!(en.time(at(2027, 3, 15, 19, 30)), "7:30 PM");
        assert_eq!(pt.time(at(2027, 3, 15, 19, 30)), "19:30");
    }

    #[test]
    fn numbers_and_costs_are_written_in_each_language() {
        let [en, pt, es] = Language::ALL.map(PageLocale::of);
        assert_eq!(en.count(12345), "12,345");
        assert_eq!(pt.count(12345), "12.345");
        assert_eq!(es.count(12345), "12.345");
        let cost = |value: serde_json::Value| Cost::from_write(&value).unwrap();
        let range = cost(serde_json::json!(["$12.5", "$1,000", "$25000"]));
        assert_eq!(en.cost(&range), "$12.5 – $25,000");
        assert_eq!(pt.cost(&range), "$12,5 – $25.000");
        assert_eq!(es.cost(&range), "$12,5 – $25.000");
        // Spanish groups thousands from five digits on (CLDR's minimum grouping).
        assert_eq!(es.cost(&cost(serde_json::json!("1,000"))), "$1000");
        let euros = cost(serde_json::json!("12.5 €"));
        assert_eq!(pt.cost(&euros), "12,5€");
        assert_eq!(en.cost(&euros), "12.5€");
        for free in [serde_json::json!(0), serde_json::json!("free")] {
            assert_eq!(pt.cost(&cost(free.clone())), "Grátis");
            assert_eq!(es.cost(&cost(free)), "Gratis");
        }
        assert_eq!(es.cost(&cost(serde_json::json!("Donation"))), "Donation");
        assert_eq!(es.cost(&Cost::default()), "");
    }

    #[test]
    fn spans_are_written_as_people_write_them() {
        let en = PageLocale::of(Language::En);
        assert_eq!(
            en.event_span(at(2027, 3, 15, 0, 0), at(2027, 3, 15, 23, 59), true, None),
            "Monday, March 15, 2027 · All day"
        );
        assert_eq!(
            en.event_span(at(2027, 3, 15, 0, 0), at(2027, 3, 17, 23, 59), true, None),
            "Monday, March 15, 2027 – Wednesday, March 17, 2027"
        );
        assert_eq!(
            en.event_span(
                at(2027, 3, 15, 19, 0),
                at(2027, 3, 15, 21, 0),
                false,
                Some("BRT")
            ),
            "Monday, March 15, 2027 · 7:00 PM – 9:00 PM (BRT)"
        );
        assert_eq!(
            en.event_span(at(2027, 3, 15, 22, 0), at(2027, 3, 16, 2, 0), false, None),
            "Monday, March 15, 2027 · 10:00 PM – 2:00 AM the next day"
        );
        assert_eq!(
            en.event_span(at(2027, 3, 15, 10, 0), at(2027, 3, 18, 18, 0), false, None),
            "Monday, March 15, 2027, 10:00 AM – Thursday, March 18, 2027, 6:00 PM"
        );
        let es = PageLocale::of(Language::Es);
        assert_eq!(
            es.event_span(at(2027, 3, 15, 22, 0), at(2027, 3, 16, 2, 0), false, None),
            "lunes, 15 de marzo de 2027 · 22:00 – 02:00 del día siguiente"
        );
    }
}
