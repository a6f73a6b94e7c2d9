"""A short reply after its question: "27" after "how old is your son?" is a fact, alone it is too
short to be a memory. The policy (policies/facts_answer.py), the memory of each conversation's
last question (governance/turns.py), and both fronts on a real server on loopback, driven turn by
turn as an agent retains a chat."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any, cast

import httpx
import pytest
from hindsight_client import Hindsight

from memwarden.governance.locks import BankGates
from memwarden.governance.retain import Batch, Retainer
from memwarden.governance.turns import LastTurns
from memwarden.metrics import Metrics
from memwarden.policies.facts_answer import answers, fact_question
from memwarden.policies.pipeline import Pipeline
from memwarden.policies.quality import QualityFilter, prepare
from memwarden.settings import GovernanceSettings
from tests import mem0_rig
from tests.conftest import running_warden
from tests.inprocess.test_retain import make_warden
from tests.loopback.test_local_store import local_settings
from tests.upstream import UpstreamProbe

ANSWERED = [
    ("how old r u", "27"),
    ("where u from", "philly"),
    ("Who's your buddy for onboarding?", "Raj"),
    ("How old are your kids?", "4 and 9"),
    ("which server u on", "NA east"),
    ("Tea or coffee?", "coffee, black"),
    ("Do you have any pets?", "two cats"),
    ("ok cool. and what's your extension?", "4417"),
    ("Sam: where are you based?", "Ana: Lisbon"),
    ("你生日想要啥", "想要一台拍立得 白色的"),
    ("你老家哪里的？", "湖南岳阳"),
    ("孩子几岁了", "五岁半"),
    ("boy or girl??", "girl!!"),  # one side of a choice, however empty the word looks alone
    ("where do you live now? haven't heard from you in ages", "Porto"),  # an aside after the question
    ("你现在住哪", "五道口"),  # "now" in a question about where someone lives
    ("小狗现在几个月了", "four months, 超黏人"),
    ("打算顺产还是剖", "顺产"),  # a choice in Chinese
    ("你的生日是？", "三月二号"),
    ("你呢 几年级", "初二"),  # the question back leads into the question asked
    ("你养狗吗？", "两只柯基"),  # 吗 with its mark
]
NOT_ANSWERED = [
    ("how are you?", "good"),  # small talk asks for nothing a memory holds
    ("how was the trip?", "amazing"),
    ("what are you up to", "nothing much"),
    ("where are you?", "5 mins away"),  # where someone is right now
    ("how old r u", "lol"),  # a laugh, a hedge, a question back
    ("how old r u", "idk lol"),
    ("how old r u", "you?"),
    ("what's your budget?", "no idea, I'll check"),
    ("do you have kids?", "yes"),
    ("I went to the park.", "27"),  # no question before it
    ("Sam: where u from", "Sam: lol jk"),  # a double text, not a reply
    ("你多大了", "还行吧"),
    ("你吃了吗", "吃了"),
    ("你住哪边", "问这干嘛"),
    ("你喝什么 我顺路带", "随便 都行"),
    ("我这几天在补 paper，有啥好看的推荐", "好"),  # a long statement with 啥 in it is no question
    ("boy or girl??", "lol"),
    ("what are you doing tomorrow?", "work"),  # tomorrow's plans, like tonight's
    ("你现在在哪", "公司"),  # where someone is right now
    ("现在几点", "三点"),
    ("天哪 太强了吧！！", "哈哈 还在紧张"),  # 天哪 is no "where"
    ("快再发几张", "它天天睡觉"),  # 几 as "a few" in a request
    ("你收到我寄的包裹了吗", "收到了 超喜欢"),  # did you get / see / hear
    ("聊啥了", "没啥 瞎聊"),  # "nothing much"
    ("你呢", "初二"),  # a question back alone asks for nothing said here
    ("你们明天上班吗", "上"),  # tomorrow's plans
    ("这个 PR 我可以直接合并到 main 分支了吗", "合并吧"),  # a long yes/no question asks for no fact
    ("你养狗吗？", "嗯"),
]


@pytest.mark.parametrize(("before", "reply"), ANSWERED)
def test_a_short_reply_to_a_question_that_asks_for_a_fact_is_an_answer(before: str, reply: str) -> None:
    assert answers(before, prepare(reply))
    verdict = QualityFilter().assess(reply, before=before)
    assert (verdict.keep, verdict.rule) == (True, "allow.answer")


@pytest.mark.parametrize(("before", "reply"), NOT_ANSWERED)
def test_small_talk_hedges_and_replies_without_a_question_are_no_answer(before: str, reply: str) -> None:
    assert not answers(before, prepare(reply))
    assert QualityFilter().assess(reply, before=before).rule != "allow.answer"


def test_alone_the_reply_is_still_too_short() -> None:
    assert QualityFilter().assess("27").rule == "length.too_short"
    assert QualityFilter().assess("27", before="").rule == "length.too_short"


def test_an_answer_overrules_the_length_rule_never_a_reject_rule() -> None:
    # A batch of an agent's notes is read item after item: a progress report after a question
    # is still progress, a bare link still a link.
    asked = "这个功能有没有必要？"
    for reply, rule in [
        ("P1-2 已完成", "progress.zh"),
        ("still broken", "progress.en"),
        ("https://example.com/some/page", "bare.url"),
        ("please restart the worker", "request.en"),
    ]:
        assert answers(asked, prepare(reply))  # short, and says something, after a question
        assert QualityFilter().assess(reply, before=asked).rule == rule


def test_a_transcripts_reply_is_judged_after_the_turn_before_it() -> None:
    pipeline = Pipeline()
    judged = pipeline.judge(0, "Mia: how old is your son now?\nTom: 27\nMia: lol ok", forward="trim")
    assert judged.verdict == "store"
    assert [s.keep for s in judged.segments] == [False, True, False]
    assert judged.text == "Tom: 27"
    # one turn's own sentences are not question and answer
    assert pipeline.judge(0, "How old is he? 27.").verdict == "reject"


def test_a_double_text_in_a_transcript_is_no_answer() -> None:
    judged = Pipeline().judge(0, "Mia: where do you live now?\nMia: Porto\nTom: lol", forward="trim")
    assert judged.verdict == "reject"


@pytest.mark.parametrize(
    ("before", "reply"),
    [
        ("what's the wifi password?", "hunter2"),
        ("whats ur pin", "4821"),
        ("what's the 2fa code", "492 113"),
        ("你银行卡密码多少", "834921"),
        ("door code?", "7734#"),
    ],
)
def test_an_answer_to_a_question_for_a_credential_is_never_kept(before: str, reply: str) -> None:
    for secrets in ("reject", "redact"):
        judged = Pipeline().judge(0, reply, secrets=secrets, before=before)  # type: ignore[arg-type]
        assert judged.verdict == "reject", (secrets, judged.rule)
    transcript = f"Mia: {before}\nTom: {reply}\nMia: thx"
    assert Pipeline().judge(0, transcript, forward="trim").verdict == "reject"
    assert answers("what's your zip code?", prepare("94110"))  # a code that is no credential


def test_the_answer_carries_its_questions_sentence_alone_and_is_a_duplicate_only_of_the_same_answer() -> None:
    pipeline = Pipeline()
    before = "I moved to 12 Oak St, my cell is 555-0199 lol. Where are you based these days?"
    judged = pipeline.judge(0, "Lisbon", before=before)
    assert (judged.verdict, judged.question) == ("store", "Where are you based these days?")
    first, again, other = pipeline.judge_many(
        [("27", []), ("27", []), ("27", [])],
        before=["how old is your son?", "how old is your son?", "what floor are you on?"],
    )
    assert first.content_hash == again.content_hash != other.content_hash
    assert first.content_hash != pipeline.judge(0, "27 years").content_hash


def test_a_question_is_no_answer_to_a_question() -> None:
    # The same side asking twice (Mem0 has no speaker in the content), or a client retrying its own
    # question: "where u from" after "how old r u" is not a fact.
    for reply in ("where u from", "how old r u", "whats yours", "do u have kids"):
        assert not answers("how old r u", prepare(reply)), reply
    for reply in ("你多大了", "你老家哪的"):
        assert not answers("你多大了", prepare(reply)), reply
    # an answer with a question back is still an answer; a clause that answers is no question
    assert answers("孩子几岁了", prepare("三岁半 你家几岁了"))
    assert answers("when did you start playing?", prepare("when I was 12"))
    for before, reply in [("what time is it", "3pm"), ("who's calling?", "mom"), ("what's the weather like?", "rainy")]:
        assert not answers(before, prepare(reply)), before


def test_the_request_before_reaches_the_first_item_and_items_follow_one_another() -> None:
    pipeline = Pipeline()
    got = pipeline.judge_many([("27", []), ("philly", [])], before=["how old r u", "where u from"])
    assert [j.verdict for j in got] == ["store", "store"]
    with pytest.raises(ValueError, match="one turn"):
        pipeline.judge_many([("27", [])], before=[])


def test_a_question_is_read_at_the_end_of_its_turn() -> None:
    assert fact_question("Congrats!! How old is she now?") == "How old is she now?"  # as written
    assert fact_question("How old is she now? Anyway, gotta run.") == "How old is she now?"  # an aside after it
    assert fact_question("How old is she now? Anyway. Gotta run.") is None  # two sentences after it
    assert fact_question("How are you? Where do you live now? Miss you.") == "Where do you live now?"
    assert fact_question("Where do you live now? How are you?") is None  # the last question asks nothing
    assert fact_question("x" * 5000 + ". where do you live?") == "where do you live?"
    assert fact_question("x" * 5000 + " where do you live?") is None  # one long sentence: a statement


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_last_turns_remembers_a_question_a_while_and_only_the_latest_turn() -> None:
    clock = Clock()
    turns = LastTurns(size=2, max_age=60, clock=clock)
    a, b, c = ("bank", "a"), ("bank", "b"), ("bank", "c")
    turns.follow(a, "how old r u")
    assert turns.question(a) == "how old r u"
    turns.follow(a, "lol")  # the latest turn asked nothing: the reply after it answers nothing
    assert turns.question(a) is None
    turns.follow(a, "where u from")
    clock.now = 61
    assert turns.question(a) is None  # too old
    turns.follow(a, "where u from")
    turns.follow(b, "which team?")
    turns.follow(c, "who's your manager?")  # the least recently used goes
    assert (turns.question(a), turns.question(b), len(turns)) == (None, "which team?", 2)
    # A request's items: the remembered question for the first, then the item before
    assert turns.before([b, b, None, a], ["NA east", "how many kids?", "x", "y"]) == [
        "which team?",
        "NA east",
        None,
        None,
    ]


def test_last_turns_keeps_only_the_tail_of_a_long_question() -> None:
    turns = LastTurns()
    turns.follow(("bank", ""), "a" * 10_000 + ". where do you live?")
    assert len(turns.question(("bank", "")) or "") == 300


def _one_turn(text: str) -> Batch:
    """A request of one item, in bank "b", a conversation without a document."""
    return Batch(
        bank="b",
        raw_items=[{"content": text}],
        contents=[text],
        tags=[[]],
        document_tags=[],
        fields={},
        request_id="r",
        threads=[""],
    )


def _retainer(ledger: Any) -> Retainer:
    """The retain service with its conversations' last turns, over ``ledger`` (no backend, no outbox)."""
    governance = GovernanceSettings()  # type: ignore[call-arg]
    return Retainer(ledger, Pipeline(), governance, BankGates(), 0.0, cast(Any, None), None, Metrics(), LastTurns())


def test_a_question_that_held_a_secret_is_remembered_masked() -> None:
    key = "sk-proj-a8F3kLmN0pQrStUvWxYz1234567890abcd"
    question = f"Who owns the key {key}?"
    batch = _one_turn(question)
    retainer = _retainer(ledger=None)
    retainer.follow_turns(batch, [Pipeline().judge(0, question)])
    remembered = retainer.turns.question(("b", ""))
    assert remembered is not None
    assert remembered.startswith("Who owns the key")
    assert key not in remembered


@pytest.mark.anyio
async def test_a_turn_that_was_not_recorded_is_not_remembered() -> None:
    # The ledger refuses the write (a full disk): the request fails, and the conversation has not
    # moved on — a retry of the same question is read as before.
    class FullDisk:
        instance_id = "full"

        async def write(self, _: object) -> None:
            raise OSError("no space left on device")

    question = "how old is your son?"
    batch = _one_turn(question)
    retainer = _retainer(ledger=FullDisk())

    async def deliver(_: object, __: object) -> None:
        raise AssertionError("nothing is delivered that was not recorded")

    with pytest.raises(OSError, match="no space"):
        await retainer.enforce(batch, [Pipeline().judge(0, question)], deliver)  # type: ignore[arg-type]
    assert retainer.turns.question(("b", "")) is None


@pytest.mark.anyio
async def test_the_backend_gets_the_question_as_the_answers_context(probe: UpstreamProbe, tmp_path: Path) -> None:
    async for warden in make_warden(probe, tmp_path):
        r = await warden.retain("Which city do you live in?", "Lisbon", {"content": "Porto", "context": "moved"})
        assert r.json()["items_count"] == 1  # "Porto" follows "Lisbon", which asked nothing
        await warden.retain("and where were you born?")
        await warden.retain({"content": "Porto", "context": "the client's own"})
        sent = [item for request in probe.requests for item in json.loads(request["body"])["items"]]
        assert [(i["content"], i.get("context")) for i in sent] == [
            ("Lisbon", "a reply to: Which city do you live in?"),
            ("Porto", "the client's own"),  # a context the client gave is kept as sent
        ]


# -- through the fronts, on a real server --------------------------------------------------------


@pytest.fixture(scope="module")
def url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with running_warden(local_settings(tmp_path_factory.mktemp("turns"))) as served:
        yield served


def _retain(url: str, bank: str, text: str, *, document_id: str | None = None, dry_run: bool = False) -> int:
    item: dict[str, str] = {"content": text}
    if document_id is not None:
        item["document_id"] = document_id
    r = httpx.post(
        f"{url}/v1/default/banks/{bank}/memories",
        json={"items": [item]},
        params={"dry_run": "true"} if dry_run else None,
        timeout=30,
    )
    assert r.status_code == 200, r.text
    return int(r.headers["x-warden-decisions"].count('"store"'))


@pytest.mark.anyio
async def test_a_chat_retained_turn_by_turn_keeps_the_reply_to_a_question(url: str) -> None:
    # The client's async calls: its sync ones leave an event loop of their own open.
    bank = f"chat-{uuid.uuid4().hex[:6]}"
    client = Hindsight(base_url=url)
    try:
        assert (await client.aretain(bank, "How old is your son now?")).items_count == 0  # a question: not stored
        assert (await client.aretain(bank, "27")).items_count == 1  # its answer
        assert (await client.aretain(bank, "28")).items_count == 0  # the question was answered
        assert (await client.aretain(f"{bank}-other", "27")).items_count == 0  # another bank asked nothing
    finally:
        await client.aclose()
    async with httpx.AsyncClient() as http:
        listed = (await http.get(f"{url}/v1/default/banks/{bank}/memories/list")).json()["items"]
    assert [(m["text"], m["context"]) for m in listed] == [("27", "a reply to: How old is your son now?")]


def test_a_dry_run_a_small_talk_turn_and_another_document_break_the_pair(url: str) -> None:
    bank = f"chat-{uuid.uuid4().hex[:6]}"
    assert _retain(url, bank, "where are you from?", dry_run=True) == 0
    assert _retain(url, bank, "philly") == 0  # a preview remembers nothing
    assert _retain(url, bank, "where are you from?") == 0
    assert _retain(url, bank, "lol") == 0
    assert _retain(url, bank, "philly") == 0  # the turn before was "lol"
    assert _retain(url, bank, "where are you from?", document_id="chat-1") == 0
    assert _retain(url, bank, "philly", document_id="chat-2") == 0  # another conversation
    assert _retain(url, bank, "philly", document_id="chat-1") == 1


def test_the_mem0_front_reads_a_reply_after_the_question_of_the_same_users_last_add(url: str) -> None:
    m = f"{url}/mem0"
    user, other = f"u-{uuid.uuid4().hex[:6]}", f"u-{uuid.uuid4().hex[:6]}"

    def add(user_id: str, role: str, content: str) -> list[str]:
        r = httpx.post(
            f"{m}/memories",
            json={"messages": [{"role": role, "content": content}], "user_id": user_id, "infer": False},
            timeout=30,
        )
        assert r.status_code == 200, r.text
        return [x["memory"] for x in r.json()["results"]]

    assert add(user, "assistant", "Which city do you live in?") == []
    assert add(other, "user", "Lisbon") == []  # another user was asked nothing
    assert add(user, "user", "Lisbon") == ["Lisbon"]
    rules = [e["rule"] for e in mem0_rig.audit(url) if e["action"] == "add"]
    assert rules == ["allow.answer"]
