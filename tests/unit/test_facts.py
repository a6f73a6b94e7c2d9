"""Statements of fact (policies/facts.py) and what they change in the quality filter's verdict: a
fact is never noise, however short or chatty; pleasantries, reactions and questions still go."""

from __future__ import annotations

import pytest

from memwarden.policies.facts import statement_kind
from memwarden.policies.quality import QualityFilter, prepare

FILTER = QualityFilter()

FACTS = [
    # (text, kind): the speaker, another person, a standing instruction — English and Chinese.
    ("I'm diabetic.", "self"),
    ("I'm 41", "self"),
    ("lol I'm left-handed", "self"),
    ("Thanks!! btw I work nights at the children's hospital", "self"),
    ("I live in Tromsø now.", "self"),
    ("We got a second dog last month, a beagle called Pip", "self"),
    ("my son plays the cello", "self"),
    ("I swim on Tuesdays before work", "self"),
    ("I've been learning Portuguese for a year", "self"),
    ("The user is a night-shift nurse.", "person"),
    ("She is allergic to latex", "person"),
    ("Ines is vegan and hates cilantro", "named"),
    ("The guest wifi is called Harbor-Guest", "thing"),
    ("Call me Bea.", "instruction"),
    ("Please always answer in Portuguese.", "instruction"),
    ("never use emoji with me", "instruction"),
    ("keep your answers short", "instruction"),
    ("我对花生过敏", "self"),
    ("我是幼儿园老师", "self"),
    ("我每周六上午去游泳", "self"),
    ("我女儿下个月开始上小学", "person"),
    ("哈哈哈，我们家狗叫豆豆", "person"),
    ("以后都用英文回复我", "instruction"),
    ("我跟男朋友分手了", "self"),
    ("Finally finished my first half marathon!!", "elided"),
    ("started a pottery class on thursdays", "elided"),
    ("I'm in Berlin this year", "self"),
    ("I'm fine with spicy food", "self"),
    ("我不吃香菜", "self"),
    ("以后不用问我要不要继续", "instruction"),
    ("她下周三回成都", "person"),
    # a question after a statement does not hide it
    ("I'm moving to Oslo, what should I pack?", "self"),
    ("my brother turns 40 next week. any gift ideas?", "self"),
    ("我下个月想试试，你们周二晚上在哪儿打？", "self"),
    # a plan or a habit in the progressive, a lowercase chat's contractions and irregular pasts
    ("we're getting dinner next friday", "self"),
    ("I've been doing yoga every morning since march", "self"),
    ("he's funny, you'd like him", "person"),
    ("Nia took her first steps today!!", "named"),
    ("did I tell you we're moving to Bristol?", "self"),
    ("Alice moved to Paris last year… crazy right", "named"),
    # what someone can never do; a question run on from a statement without a comma
    ("I can't eat dairy, can you adapt this recipe?", "self"),
    ("we can't have pets in this flat", "self"),
    ("I have my driving test on Friday so fingers crossed 🤞 can you quiz me on the signs?", "self"),
    # a possession and what happened to it, in Chinese
    ("我的paper中了CVPR！！", "self"),
    ("她的签证批了", "person"),
    # a short reply that names when: an appointment or a routine agreed in chat
    ("Wednesdays", "when"),
    ("4pm it is, they confirmed", "when"),
    ("the 17th works", "when"),
    ("see you saturday!", "when"),
    ("周三下午", "when"),
    ("下午四点吧", "when"),
    ("3 p.m. works", "when"),
    ("may 5", "when"),
    ("四点半", "when"),
    ("两点到四点", "when"),
    ("ok see you around 8", "when"),
    # any verb with a day, a date or a recurrence ahead: a plan or a habit
    ("Hi! Yes all good, just super busy, we launch the new app on the 15th", "plan"),
    ("I coach the under-9s every saturday", "plan"),
    ("是的 两点到四点", "when"),
]

NOT_FACTS = [
    "I'm so happy for you!",
    "I love that!",
    "I know, right",
    "I'm fine, thanks",
    "I'll check and get back to you",
    "I'm on it",
    "I had a lovely time",
    "I can't wait to see you",
    "I just pushed the fix",
    "We should grab lunch sometime",
    "He said he'd call later",
    "Tests are passing now",
    "What is your name?",
    "我太开心了",
    "我知道了",
    "我看看",
    "我也是",
    "你最近怎么样？",
    "他回来了吗",
    "finally fixed the flaky test",
    "just started the deploy",
    "got it, thanks",
    # the here and now, and an agent's or a developer's work chatter
    "We're deploying now",
    "I'm running late",
    "My build is failing",
    "The user is typing",
    "I've pushed the changes to the branch",
    "Started the deploy",
    "Merged the PR",
    "Found 3 matches in src/",
    "Reading file src/app.py",
    "我有个问题",
    "他是不是搬家了",
    "I'm running the tests again tomorrow",
    "how's work? still busy?",
    # a Chinese A-not-A question is dropped wherever it stands, not only at the end
    "我是不是得了抑郁症，最近总是失眠",
    "他是不是搬家了，我听说的",
    # "this may" is a guess, not a month; a progressive toward the listener is the conversation
    "Not sure yet, I'm guessing this may be a DNS issue",
    "I'm getting back to you on Monday, sound good?",
    "She's getting back to you next week.",
    # a day, a time or a date that is not an appointment: greetings, arrivals, logs, questions, versions
    "happy friday!",
    "I can't believe it's already Friday",
    "I can't make it tonight",
    "5 mins",
    "how about thursday?",
    "[12:04:33] INFO starting worker",
    "[voice message 0:03]",
    "大家周一好！",
    "周五的会几点开始",
    "Ubuntu 22.04",
    # (a review's list) a question or a proposal without its mark, work and log lines, moods, places
    # and ordinals, ratios and verses, "一点" and "号" that are not a time or a date
    "周三行吗",
    "周五要不要一起吃饭",
    "how about thursday",
    "does friday work",
    "pls review by friday",
    "12:04 worker started",
    "build failed at 14:05",
    "it's friday",
    "Monday blues",
    "周一加油",
    "周五啦～",
    "back at 2pm",
    "1st place!!",
    "123 5th Avenue",
    "2 maybe 3",
    "John 3:16",
    "score 10:12",
    "往下一点",
    "坐1号线",
    "一日三餐",
    "我的PR过了，正在部署",
    "我的建议是先回滚",
    "我的代码上线了",
    "I can't speak right now",
    "I can't drive today, car's in the shop",
    "i can't drink anymore lol",
    "I'm deploying tomorrow",
    "we wrap up in a bit",
    # work in hand and talk to the listener, whenever they happen (a review's list)
    "I deploy tomorrow",
    "I push the fix tomorrow",
    "we sync next week",
    "I ping you tomorrow",
    "we follow up next week",
    "I check back tomorrow",
    "we retry every morning",
    "we rebase every morning",
    "see you in 5",
]


@pytest.mark.parametrize(("text", "kind"), FACTS)
def test_a_fact_is_found(text: str, kind: str) -> None:
    assert statement_kind(prepare(text), text) == kind


@pytest.mark.parametrize("text", NOT_FACTS)
def test_no_fact_in_pleasantries_reactions_and_questions(text: str) -> None:
    assert statement_kind(prepare(text), text) is None


@pytest.mark.parametrize(("text", "kind"), FACTS)
def test_a_fact_is_kept_by_a_sure_rule(text: str, kind: str) -> None:
    """Kept, by a rule the learned layer does not second-guess (an ``allow.`` rule)."""
    verdict = FILTER.assess(text)
    assert verdict.keep, verdict.reason
    assert verdict.rule.startswith("allow."), verdict.rule


@pytest.mark.parametrize(
    ("text", "rule"),
    [
        ("我对青霉素过敏，请记住", "allow.fact"),  # a request beside the fact: request.zh overruled
        ("Please remember I'm vegetarian", "allow.fact"),  # request.en overruled
        ("Maybe I'm moving to Lisbon in spring", "allow.fact"),  # half_formed overruled
        ("I just finished my first marathon!", "allow.fact"),  # progress.en overruled
        ("I'm 34", "allow.fact"),  # shorter than the length bound
    ],
)
def test_a_fact_overrules_requests_hedges_and_progress(text: str, rule: str) -> None:
    verdict = FILTER.assess(text)
    assert (verdict.keep, verdict.rule) == (True, rule), verdict.reason


@pytest.mark.parametrize(
    ("text", "rule"),
    [
        ("Tests are passing now", "progress.en"),  # a capitalised word is no sure subject
        ("still broken", "progress.en"),
        ("I'm so happy for you!", None),
        ("Thanks!", "chatter"),
        ("Can you help me with something?", "question.mark"),
        # a reply that names when overrules the length rule only: not a request or a guess
        ("pls 4pm", "request.en"),
        ("maybe 4pm", "half_formed"),
    ],
)
def test_noise_is_not_rescued(text: str, rule: str | None) -> None:
    verdict = FILTER.assess(text)
    assert not verdict.keep or not verdict.rule.startswith("allow."), verdict.reason
    if rule is not None:
        assert (verdict.keep, verdict.rule) == (False, rule)


def test_a_plan_is_kept_but_never_overrules_a_reject_rule() -> None:
    """Any verb with a day ahead is a plan ("we launch the new app on the 15th"): kept by a sure
    rule, but with progress or a question beside it the reject rule still wins."""
    assert statement_kind(prepare("we launch the new app on the 15th")) == "plan"
    assert FILTER.assess("we launch the new app on the 15th").rule == "allow.fact"
    assert FILTER.assess("we launch the new app on the 15th, in progress").rule == "progress.en"
    assert FILTER.assess("we launch the new app on the 15th, can you check the copy?").rule == "question.mark"


def test_the_detector_can_be_switched_off() -> None:
    off = QualityFilter(disabled=["allow.fact"])
    assert off.assess("I'm 34").rule == "length.too_short"
    assert off.assess("Please remember I'm vegetarian").rule == "request.en"


@pytest.mark.parametrize(
    ("text", "topic"),
    [
        ("My daughter is allergic to peanuts.", "personal"),
        ("我女儿对花生过敏", "personal"),
    ],
)
def test_a_fact_about_a_person_is_labelled_personal_by_the_rules(text: str, topic: str) -> None:
    from memwarden.policies.pipeline import Pipeline

    assert Pipeline().judge(0, text).topic == topic


@pytest.mark.parametrize(
    ("learned", "text", "topic"),
    [
        ("code", "My son is allergic to cats.", "personal"),  # about a person: never an engineering topic
        ("infra", "我老婆怀孕了，预产期在五月", "personal"),
        ("personal", "The CI runner image is pinned in the GitHub workflow.", "personal"),  # not the other way
        ("code", "Priya fixed the bug in the billing API; her daughter starts school in May.", "code"),  # both
        ("business", "My son is allergic to cats.", "business"),  # only the engineering/personal line is guarded
    ],
)
def test_facts_about_people_are_never_in_an_engineering_topic(learned: str, text: str, topic: str) -> None:
    from memwarden.policies.labelling import people_apart
    from memwarden.policies.labels import LabelClassifier

    assert people_apart(LabelClassifier(), learned, prepare(text), None) == topic


@pytest.mark.timeout(20)
@pytest.mark.parametrize(
    "text",
    [
        "a" + " " * 200_000 + "b",
        "😀 " * 50_000,
        "I'm " + "so " * 50_000 + "happy",
        "我" + "也" * 100_000 + "是",
        "!" * 100_000,
        # the two sure noise rules read a short text only (a process under way, a note of the conversation)
        "running " + "1" * 999_000,
        "2024 " * 199_800 + "running",
        "正在下载" + "1" * 999_000,
        "User asked about " + "a" * 999_000,
    ],
)
def test_a_long_hostile_text_is_judged_in_linear_time(text: str) -> None:
    """The detector reads a bounded prefix and splits without backtracking (a whitespace run once
    cost quadratic time: 10 s for 20,000 spaces)."""
    assert statement_kind(prepare(text), text) is None or FILTER.assess(text).keep


def test_a_second_known_label_from_the_client_is_dropped_an_unknown_one_kept() -> None:
    from memwarden.policies.pipeline import Pipeline

    judged = Pipeline().judge(
        0, "The billing service is written in Go.", ["topic:code", "topic:infra", "topic:homelab"]
    )
    topics = [t for t in judged.tags if t.startswith("topic:")]
    assert topics == ["topic:code", "topic:homelab"]


def test_the_learned_layer_cannot_overrule_a_sure_noise_rule() -> None:
    """A learned layer that would keep everything keeps a question (a rule it may overrule) but not a
    process under way or a note of the conversation itself (rules it does not second-guess)."""
    import numpy as np

    from memwarden.policies.learned import Head, LearnedLayer, Model
    from memwarden.policies.pipeline import Pipeline
    from memwarden.policies.vocabulary import STAGES, TOPICS

    dim = 8

    def embed(texts: object) -> np.ndarray:
        return np.ones((len(texts), dim), dtype=np.float32) / np.sqrt(dim)  # type: ignore[arg-type]

    def head(names: dict[str, object]) -> Head:
        return Head(tuple(names), np.zeros((len(names), dim), np.float32), np.zeros(len(names), np.float32))

    keeps_all = Model("stub", 1.0, np.zeros(dim, np.float32), 50.0, 0.5, 0.5, head(TOPICS), head(STAGES))
    pipeline = Pipeline(learned=LearnedLayer(keeps_all, embed, topics=TOPICS, stages=STAGES))
    assert pipeline.judge(0, "what port does the API use?").rule == "learned.keep"
    for text, rule in (
        ("syncing photos…", "progress.under_way"),
        ("refactor done, running the test suite now", "progress.under_way"),
        ("User asked about tomorrow's weather forecast.", "conversation_note"),
        ("用户问东京现在几点。", "conversation_note"),
    ):
        judged = pipeline.judge(0, text)
        assert (judged.verdict, judged.rule) == ("reject", rule), text
