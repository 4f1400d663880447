"""A deterministic, generated long-conversation dataset for ``bench/retrieval.py``.

Eight conversations between two friends (five in English, three in Chinese), ten dated sessions of
about thirty turns each: 2,400 turns. Every turn starts with its speaker's name, as in public
long-conversation benchmarks. Most turns are small talk drawn from a pool that reuses the same
everyday words (work, weekend, kids, food, weather); about a dozen turns per conversation state
facts (an adoption, a trip, a purchase, a race, a new hobby...), some with a relative date
("yesterday", "last Saturday", "昨天"). Questions are written from the facts and labelled with the
turns that hold the evidence:

- single-hop: one fact, asked with the words a person would use (word forms differ: hiking/hiked);
- multi-hop: two facts of the same speaker from different sessions, asked together;
- temporal: what a speaker did on a calendar day, the fact having said "yesterday" or "last week";
- paraphrase: one fact asked in other words (unwind / relax, 放松 / 解压);
- adversarial: a fact asked about the other speaker; the evidence is the turn that holds the fact.

Nothing comes from a public data set: names, places and sentences are generated from the tables
below with ``random.Random(seed)``; the same seed gives the same dataset on every machine.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

SESSIONS = 10
TURNS_PER_SESSION = 30


@dataclass(frozen=True, slots=True)
class Turn:
    index: int  # position in the conversation, 0-based
    session: int
    speaker: str
    text: str
    at: datetime


@dataclass(frozen=True, slots=True)
class Question:
    id: str
    category: str
    text: str
    evidence: tuple[int, ...]  # turn indexes


@dataclass
class Conversation:
    id: str
    language: str
    speakers: tuple[str, str]
    turns: list[Turn] = field(default_factory=list)
    questions: list[Question] = field(default_factory=list)


# A fact: (statement, lexical question, paraphrase question); {s} speaker, {x} the slot value.
EN_FACTS: list[tuple[str, str, str, list[str]]] = [
    ("we adopted a {x} puppy from the shelter, the kids named him Biscuit", "What breed of puppy did {s} adopt?",
     "Which new four-legged family member came home with {s}?", ["beagle", "corgi", "labrador", "poodle"]),
    ("I finally hiked up to {x} with my brother, the view was unreal", "Where did {s} go hiking?",
     "Which summit did {s} climb on foot with a sibling?", ["Eagle Ridge", "Mount Selwyn", "Harlow Peak", "Cobalt Hill"]),
    ("I bought a vintage {x} at the flea market for twenty dollars", "What did {s} buy at the flea market?",
     "What second-hand treasure did {s} pick up cheaply at the outdoor bazaar?", ["brass compass", "typewriter", "record player", "film camera"]),
    ("after a long shift I relax with {x}, it clears my head", "How does {s} relax after a long shift?",
     "What does {s} do to unwind once work is over?", ["pottery", "yoga", "gardening", "baking bread"]),
    ("I ran the {x} half marathon and finished in under two hours", "Which half marathon did {s} run?",
     "Which long-distance race did {s} complete?", ["Riverside", "Lakeshore", "Old Town", "Harbour"]),
    ("my daughter started {x} lessons and she practises every evening", "What lessons did {s}'s daughter start?",
     "What is {s}'s girl learning to play these days?", ["violin", "piano", "cello", "guitar"]),
    ("we spent a week in {x} and ate way too much street food", "Which city did {s} spend a week in?",
     "Where did {s} travel abroad and enjoy the food stalls?", ["Lisbon", "Hanoi", "Oaxaca", "Marrakesh"]),
    ("I volunteer at the {x} on Sundays now, sorting donations", "Where does {s} volunteer on Sundays?",
     "Where does {s} give up free time to help sort things people give away?", ["food bank", "animal shelter", "library", "community kitchen"]),
    ("I signed up for a {x} class at the community college", "What class did {s} sign up for at the community college?",
     "What course is {s} taking to learn something new?", ["photography", "ceramics", "Spanish", "woodworking"]),
    ("my car broke down on the highway, the {x} failed", "What part of {s}'s car failed on the highway?",
     "Why was {s}'s vehicle stranded by the road?", ["alternator", "transmission", "radiator", "fuel pump"]),
    ("I painted a {x} for the charity auction and it sold", "What did {s} paint for the charity auction?",
     "Which artwork of {s} raised money for a good cause?", ["sunset over the lake", "portrait of my grandmother", "field of sunflowers", "city skyline"]),
    ("I got promoted to {x} at the hospital", "What was {s} promoted to?",
     "What new job title did {s} earn at work?", ["head nurse", "ward manager", "charge nurse", "clinical lead"]),
]
EN_DAYS = ["yesterday", "last Saturday", "two days ago", "last week", "today"]
EN_FILLER = [
    "how was your weekend?", "work has been crazy this week, I barely slept", "the kids are driving me nuts lately",
    "did you watch the game last night?", "I made pasta for dinner again, nothing special", "the weather turned cold so fast",
    "we should grab coffee soon", "I'm so tired, this week felt like a month", "haha that's so true",
    "my mom called, she says hi", "I keep forgetting to water my plants", "traffic was terrible this morning",
    "I need a vacation honestly", "that sounds like fun, tell me more", "oh no, I hope everything is okay",
    "we went to the park with the kids, nothing fancy", "I started reading a new book but it's slow",
    "my neighbour's dog barks all night", "I finally cleaned the garage", "the new cafe downtown is overpriced",
    "I had a long shift at work and came home exhausted", "my brother is moving to another city",
    "I tried a new recipe, it was a disaster", "the school sent another note about the field trip",
    "I love that, you always find the best things", "we had friends over for dinner on Friday",
    "I've been thinking about changing jobs", "my back hurts from sitting all day", "I should really exercise more",
    "the market was packed on Sunday", "I'm proud of you, seriously", "let's plan something for next month",
    "the shelter near us is always looking for help", "I want to learn something new this year",
    "my daughter wants a pet so badly", "the view from our balcony is nice in the evening",
]
ZH_FACTS: list[tuple[str, str, str, list[str]]] = [
    ("我们从救助站领养了一只{x}，孩子们给它起名叫豆豆", "{s}领养了什么狗？", "{s}家里新添了哪位四条腿的成员？", ["柯基", "柴犬", "金毛", "泰迪"]),
    ("我和哥哥终于爬上了{x}，风景太美了", "{s}去哪里爬山了？", "{s}和兄弟一起徒步登顶了哪里？", ["黄山", "泰山", "华山", "峨眉山"]),
    ("我在二手市场花五十块买了一台{x}", "{s}在二手市场买了什么？", "{s}淘到了什么便宜的旧货？", ["老式收音机", "胶片相机", "缝纫机", "打字机"]),
    ("下班以后我靠{x}放松，心情会好很多", "{s}下班后怎么放松？", "{s}工作结束后用什么方式解压？", ["练瑜伽", "弹古筝", "养花", "做陶艺"]),
    ("我跑完了{x}半程马拉松，用时不到两小时", "{s}跑了哪个半程马拉松？", "{s}完成了哪场长距离比赛？", ["西湖", "滨江", "东湖", "太湖"]),
    ("女儿开始学{x}了，每天晚上都练习", "{s}的女儿开始学什么了？", "{s}家的小姑娘最近在学哪种乐器？", ["小提琴", "钢琴", "二胡", "琵琶"]),
    ("我们在{x}待了一个星期，吃了很多小吃", "{s}在哪个城市待了一个星期？", "{s}出门旅行去了哪里品尝美食？", ["成都", "西安", "厦门", "长沙"]),
    ("我报了社区大学的{x}课", "{s}报了什么课？", "{s}最近在进修学习什么新本领？", ["摄影", "书法", "日语", "烘焙"]),
]
ZH_DAYS = ["昨天", "前天", "上周", "今天", "三天前"]
ZH_FILLER = [
    "周末过得怎么样？", "这周工作太忙了，几乎没睡觉", "孩子们最近太闹了", "昨晚你看球赛了吗？", "晚饭又做了面条，没什么特别的",
    "天气一下子就变冷了", "我们改天一起喝咖啡吧", "好累啊，这一周像一个月那么长", "哈哈，说得太对了", "我妈打电话来，让我问你好",
    "我总是忘记给花浇水", "今天早上堵车太厉害了", "我真的需要放个假", "听起来很有意思，多说说", "哎呀，希望一切都好",
    "我们带孩子去公园转了转", "最近在看一本新书，但是有点慢", "邻居家的狗整晚叫", "终于把车库收拾干净了", "市中心新开的咖啡店太贵了",
    "上了一天班，回家累坏了", "我哥要搬去别的城市了", "试了一个新菜谱，结果失败了", "学校又发了春游的通知", "我们周五请朋友来家里吃饭",
    "最近在考虑换工作", "坐了一天，腰好疼", "我真该多运动运动", "周日市场人特别多", "我们下个月计划一下出去玩吧",
]
EN_NAMES = [("Caroline", "Melanie"), ("Jon", "Gina"), ("Audrey", "Andrew"), ("Maria", "Tom"), ("Evan", "Sam")]
ZH_NAMES = [("李娜", "王伟"), ("张敏", "刘洋"), ("陈静", "赵磊")]
EN_DATE = "{d.day} {month} {d.year}"
ZH_DATE = "{d.year}年{d.month}月{d.day}日"
MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
          "November", "December"]
RELATIVE_OFFSETS = {"yesterday": 1, "last Saturday": None, "two days ago": 2, "last week": 7, "today": 0,
                    "昨天": 1, "前天": 2, "上周": 7, "今天": 0, "三天前": 3}


def _said_day(said: datetime, expression: str) -> datetime:
    offset = RELATIVE_OFFSETS[expression]
    if offset is None:  # last Saturday: the Saturday before the day it was said
        offset = (said.weekday() - 5) % 7 or 7
    return said - timedelta(days=offset)


def _date_text(day: datetime, language: str) -> str:
    return EN_DATE.format(d=day, month=MONTHS[day.month - 1]) if language == "en" else ZH_DATE.format(d=day)


def build_conversation(index: int, language: str, rng: random.Random) -> Conversation:
    names = EN_NAMES[index] if language == "en" else ZH_NAMES[index]
    facts, filler, days = (EN_FACTS, EN_FILLER, EN_DAYS) if language == "en" else (ZH_FACTS, ZH_FILLER, ZH_DAYS)
    conv = Conversation(f"{language}{index}", language, names)
    start = datetime(2023, 3, 1, 9, 0, tzinfo=UTC) + timedelta(days=37 * index)
    # Each fact once, for a random speaker, in a random session (distinct turn slots).
    planted = []
    for number, fact in enumerate(facts):
        planted.append((rng.randrange(SESSIONS), rng.randrange(2, TURNS_PER_SESSION - 2), number, fact, rng.randrange(2)))
    slots = {(s, t): p for s, t, *p in planted}
    position = 0
    fact_turns: dict[int, tuple[int, str, str, datetime, str | None]] = {}
    for session in range(SESSIONS):
        day = start + timedelta(days=session * rng.randint(6, 11) + session)
        for turn in range(TURNS_PER_SESSION):
            speaker = names[turn % 2]
            at = day + timedelta(minutes=2 * turn)
            text = rng.choice(filler)
            if (session, turn) in slots:
                number, (statement, *_rest, values), who = slots[(session, turn)]
                speaker = names[who]
                value = values[rng.randrange(len(values))]
                relative = rng.choice(days) if rng.random() < 0.6 else None
                body = statement.format(x=value)
                text = (f"{relative} {body}" if language == "en" else f"{relative}{body}") if relative else body
                fact_turns[number] = (position, speaker, value, at, relative)
            conv.turns.append(Turn(position, session, speaker, f"{speaker}: {text}", at))
            position += 1
    _questions(conv, facts, fact_turns, rng)
    return conv


def _questions(conv: Conversation, facts, fact_turns, rng: random.Random) -> None:  # type: ignore[no-untyped-def]
    other = {conv.speakers[0]: conv.speakers[1], conv.speakers[1]: conv.speakers[0]}
    numbers = sorted(fact_turns)
    for number in numbers:
        position, speaker, _value, at, relative = fact_turns[number]
        _, lexical, paraphrase, _ = facts[number]
        qid = f"{conv.id}-f{number}"
        conv.questions.append(Question(qid + "-single", "single-hop", lexical.format(s=speaker), (position,)))
        conv.questions.append(Question(qid + "-para", "paraphrase", paraphrase.format(s=speaker), (position,)))
        conv.questions.append(Question(qid + "-adv", "adversarial", lexical.format(s=other[speaker]), (position,)))
        if relative is not None:
            day = _date_text(_said_day(at, relative), conv.language)
            text = f"What did {speaker} do on {day}?" if conv.language == "en" else f"{speaker}{day}做了什么？"
            conv.questions.append(Question(qid + "-time", "temporal", text, (position,)))
    by_speaker: dict[str, list[int]] = {}
    for number in numbers:
        by_speaker.setdefault(fact_turns[number][1], []).append(number)
    for speaker, mine in by_speaker.items():
        rng.shuffle(mine)
        for a, b in zip(mine[::2], mine[1::2], strict=False):
            qa, qb = facts[a][1].format(s=speaker), facts[b][1].format(s=speaker)
            joiner = " And " if conv.language == "en" else "另外，"
            evidence = tuple(sorted((fact_turns[a][0], fact_turns[b][0])))
            conv.questions.append(Question(f"{conv.id}-m{a}-{b}", "multi-hop", qa + joiner + qb, evidence))


def build_dataset(seed: int = 20231) -> list[Conversation]:
    rng = random.Random(seed)
    return [build_conversation(i, "en", rng) for i in range(5)] + [build_conversation(i, "zh", rng) for i in range(3)]
