"""The tables ``bench/conversations.py`` draws from: fact topics with their questions and hard
negatives, relative days and small talk, in English and Chinese. Written for this benchmark.

In a topic, ``{x}`` is the fact's value, ``{s}`` the fact's speaker. In a negative, ``{y}`` is
another value of the same slot (a competing answer), ``{s}`` the fact's speaker and ``{o}`` the
person the negative's speaker talks to. ``when`` places a negative before the fact (a wish, a
plan), after it (a follow-up, a question about it) or anywhere. In small talk ``{o}`` is the
listener's name.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Negative:
    by: str  # self: the fact's speaker; other: the friend
    when: str  # before | after | any
    text: str


@dataclass(frozen=True, slots=True)
class Topic:
    statement: str
    question: str
    paraphrase: str
    values: tuple[str, ...]
    negatives: tuple[Negative, ...]


def _topic(statement: str, question: str, paraphrase: str, values: list[str],
           negatives: list[tuple[str, str, str]]) -> Topic:
    return Topic(statement, question, paraphrase, tuple(values), tuple(Negative(*n) for n in negatives))


EN_TOPICS = [
    _topic("we adopted a {x} puppy from the shelter, the kids named him Biscuit", "What breed of puppy did {s} adopt?",
           "Which new four-legged family member came home with {s}?", ["beagle", "corgi", "labrador", "poodle"], [
               ("self", "before", "I keep looking at puppies online, a {y} would be so cute"),
               ("other", "any", "my cousin adopted a {y} from a breeder last spring, it cost a fortune"),
               ("self", "after", "Biscuit chewed through another shoe, puppies are so much work"),
               ("other", "after", "{s}, how are the kids getting on with the new dog?"),
               ("other", "any", "we walked past the animal shelter on Sunday, they have so many dogs right now"),
               ("self", "before", "we might get a dog for the kids, I'm reading about breeds"),
               ("other", "any", "our neighbours got a {y} puppy, it never stops barking"),
               ("self", "after", "we took Biscuit to the vet for his shots, he was so brave"),
               ("other", "after", "{s}, send me a picture of the puppy!"),
               ("other", "any", "dogs from the shelter are the sweetest, everyone says so")]),
    _topic("I finally hiked up to {x} with my brother, the view was unreal", "Where did {s} go hiking?",
           "Which summit did {s} climb on foot with a sibling?", ["Eagle Ridge", "Mount Selwyn", "Harlow Peak", "Cobalt Hill"], [
               ("self", "before", "my brother keeps asking me to go hiking with him, maybe {y} this summer"),
               ("other", "any", "my coworker hiked {y} last year and said the trail was brutal"),
               ("self", "after", "my legs still ache from that climb, the trail down was the worst part"),
               ("other", "after", "{s}, did your brother take any photos from the top?"),
               ("other", "any", "I bought new hiking boots but I haven't gone anywhere in them"),
               ("self", "before", "I need to get in shape before I try a real mountain hike"),
               ("other", "any", "we drove past {y} on the way to my parents, it looked steep"),
               ("self", "after", "my brother wants to hike another peak next month, I'm not sure"),
               ("other", "after", "{s}, was the hike as hard as you expected?"),
               ("other", "any", "hiking is not my thing, I get lost on every trail")]),
    _topic("I bought a vintage {x} at the flea market for twenty dollars", "What did {s} buy at the flea market?",
           "What second-hand treasure did {s} pick up cheaply at the outdoor bazaar?",
           ["brass compass", "typewriter", "record player", "film camera"], [
               ("self", "before", "I want to go to the flea market this weekend, I never buy anything though"),
               ("other", "any", "my uncle sells old stuff at markets, last time it was a {y} and some clocks"),
               ("self", "after", "the seller at the market said it belonged to a sailor, who knows"),
               ("other", "after", "{s}, you always find the best things at those markets"),
               ("other", "any", "the flea market was packed on Sunday, I left with nothing"),
               ("self", "before", "do you know when the flea market opens on weekends?"),
               ("other", "any", "I sold my old {y} online for almost nothing"),
               ("self", "after", "I cleaned it up and put it on the shelf in the living room"),
               ("other", "after", "{s}, did you haggle with the seller or pay the full price?"),
               ("other", "any", "vintage stuff is so expensive in the shops these days")]),
    _topic("after a long shift I relax with {x}, it clears my head", "How does {s} relax after a long shift?",
           "What does {s} do to unwind once work is over?", ["pottery", "yoga", "gardening", "baking bread"], [
               ("self", "any", "I had a long shift at work and came home exhausted"),
               ("other", "any", "my sister swears by {y} to relax, I never have the patience"),
               ("other", "any", "{s}, you work such long shifts, how do you not burn out?"),
               ("self", "any", "work has been so stressful, I can't switch off at night"),
               ("other", "any", "I should find something to help me relax, maybe a hobby"),
               ("self", "any", "my shifts got longer again, the hospital is short of staff"),
               ("other", "any", "I tried {y} once, it was harder than it looks"),
               ("other", "any", "{s}, you seem calmer lately, whatever you're doing is working"),
               ("self", "any", "after work I can never fall asleep before midnight"),
               ("other", "any", "relaxing is hard for me, my head never stops")]),
    _topic("I ran the {x} half marathon and finished in under two hours", "Which half marathon did {s} run?",
           "Which long-distance race did {s} complete?", ["Riverside", "Lakeshore", "Old Town", "Harbour"], [
               ("self", "before", "I'm training for a half marathon, my knees are not happy about it"),
               ("other", "any", "my neighbour ran the {y} marathon, the full one, he is crazy"),
               ("self", "after", "I still have the medal on my fridge, my time was better than I hoped"),
               ("other", "after", "{s}, are you going to run another race this year?"),
               ("other", "any", "I tried running in the morning but I gave up after a week"),
               ("self", "before", "I signed up for a race, now I have to actually train"),
               ("other", "any", "the {y} race closed half the roads downtown on Sunday"),
               ("self", "after", "after the race I couldn't walk properly for two days"),
               ("other", "after", "{s}, what was your finishing time again?"),
               ("other", "any", "people who run marathons are a different species")]),
    _topic("my daughter started {x} lessons and she practises every evening", "What lessons did {s}'s daughter start?",
           "What is {s}'s girl learning to play these days?", ["violin", "piano", "cello", "guitar"], [
               ("other", "any", "my son wants to quit his {y} lessons already, kids"),
               ("self", "before", "my daughter wants to learn an instrument, I have no idea which one"),
               ("self", "after", "the lessons are expensive but she loves her teacher"),
               ("other", "after", "{s}, does your daughter have a recital coming up?"),
               ("other", "any", "I played the {y} as a kid and I regret quitting"),
               ("other", "any", "my niece plays the {y} in the school orchestra"),
               ("self", "before", "my daughter saw a concert on TV and now she wants lessons"),
               ("self", "after", "the practising is loud but I'm proud of her"),
               ("other", "after", "{s}, is your daughter still enjoying her lessons?"),
               ("other", "any", "music lessons cost so much these days")]),
    _topic("we spent a week in {x} and ate way too much street food", "Which city did {s} spend a week in?",
           "Where did {s} travel abroad and enjoy the food stalls?", ["Lisbon", "Hanoi", "Oaxaca", "Marrakesh"], [
               ("self", "before", "we're thinking about a trip abroad, maybe {y}, nothing booked yet"),
               ("other", "any", "my friend spent a month in {y} and came back a different person"),
               ("self", "after", "I'm still dreaming about the food from that trip, I gained two kilos"),
               ("other", "after", "{s}, did you bring back any souvenirs from the trip?"),
               ("other", "any", "I need a vacation honestly, somewhere with good food"),
               ("self", "before", "I keep looking at flights, everything is so expensive"),
               ("other", "any", "{y} is on my list, I hear the food there is amazing"),
               ("self", "after", "the street food was the best part, I want to go back"),
               ("other", "after", "{s}, which place did you like most on your trip?"),
               ("other", "any", "we haven't travelled abroad since the kids were born")]),
    _topic("I volunteer at the {x} on Sundays now, sorting donations", "Where does {s} volunteer on Sundays?",
           "Where does {s} give up free time to help sort things people give away?",
           ["food bank", "animal shelter", "library", "community kitchen"], [
               ("other", "any", "my mom volunteers at the {y} on weekdays, she loves it"),
               ("self", "before", "I want to volunteer somewhere, I just never find the time"),
               ("self", "after", "sorting donations is tiring but people are so generous"),
               ("other", "after", "{s}, you spend every Sunday helping out, I admire that"),
               ("other", "any", "the shelter near us is always looking for help"),
               ("other", "any", "the {y} in our town closed because nobody helped"),
               ("self", "before", "a friend asked me to help out on weekends, I might say yes"),
               ("self", "after", "this Sunday we had so many donations we ran out of boxes"),
               ("other", "after", "{s}, can I come help on Sunday sometime?"),
               ("other", "any", "I donated a bag of old clothes last month")]),
    _topic("I signed up for a {x} class at the community college", "What class did {s} sign up for at the community college?",
           "What course is {s} taking to learn something new?", ["photography", "ceramics", "Spanish", "woodworking"], [
               ("self", "before", "I want to learn something new this year"),
               ("other", "any", "my husband took a {y} class once and dropped out after two weeks"),
               ("self", "after", "the teacher at the community college is strict but good"),
               ("other", "after", "{s}, how is the class going, is the homework hard?"),
               ("other", "any", "the community college sent a catalogue with evening classes"),
               ("self", "before", "the community college has evening classes, I'm tempted"),
               ("other", "any", "my sister teaches {y} at a high school"),
               ("self", "after", "my first assignment for the class is due next week"),
               ("other", "after", "{s}, are you still going to that class every week?"),
               ("other", "any", "I always sign up for courses and never finish them")]),
    _topic("my car broke down on the highway, the {x} failed", "What part of {s}'s car failed on the highway?",
           "Why was {s}'s vehicle stranded by the road?", ["alternator", "transmission", "radiator", "fuel pump"], [
               ("other", "any", "the mechanic said my {y} is fine, just the brakes need work"),
               ("self", "any", "traffic on the highway was terrible this morning"),
               ("self", "after", "the repair shop finally gave the car back, it cost a fortune"),
               ("other", "after", "{s}, are you driving again or still taking the bus?"),
               ("other", "any", "my car makes a weird noise on the highway, I'm ignoring it"),
               ("other", "any", "my {y} was replaced last year, it cost me a fortune"),
               ("self", "before", "my car has been making strange noises for weeks"),
               ("self", "after", "I had to wait three hours for the tow truck"),
               ("other", "after", "{s}, did the insurance cover the repair?"),
               ("other", "any", "I hate driving on the highway at night")]),
    _topic("I painted a {x} for the charity auction and it sold", "What did {s} paint for the charity auction?",
           "Which artwork of {s} raised money for a good cause?",
           ["sunset over the lake", "portrait of my grandmother", "field of sunflowers", "city skyline"], [
               ("self", "before", "the charity auction is next month, I should donate something"),
               ("other", "any", "my aunt painted a {y} once, it still hangs in her hallway"),
               ("self", "after", "I didn't expect anyone to bid on it, I'm still smiling"),
               ("other", "after", "{s}, you should sell more of your paintings"),
               ("other", "any", "the school auction raised less money than last year"),
               ("self", "before", "I've started painting again after years, just for fun"),
               ("other", "any", "I saw a {y} at the gallery downtown, it was beautiful"),
               ("self", "after", "the buyer at the auction wants another painting from me"),
               ("other", "after", "{s}, how much did your painting go for?"),
               ("other", "any", "charity events always have the same people bidding")]),
    _topic("I got promoted to {x} at the hospital", "What was {s} promoted to?",
           "What new job title did {s} earn at work?", ["head nurse", "ward manager", "charge nurse", "clinical lead"], [
               ("self", "before", "my boss hinted there might be a promotion, I'm not getting my hopes up"),
               ("other", "any", "my friend at the hospital became {y} and now she never sleeps"),
               ("self", "after", "the new job means more meetings and less time with patients"),
               ("other", "after", "{s}, congratulations again, the hospital is lucky to have you"),
               ("other", "any", "I've been thinking about changing jobs"),
               ("self", "before", "the hospital is hiring for a senior role, I applied"),
               ("other", "any", "{y} is a hard job, the hours are awful"),
               ("self", "after", "I got a raise with the new role, finally"),
               ("other", "after", "{s}, do you like the new position so far?"),
               ("other", "any", "my company never promotes anyone from inside")]),
]
EN_DAYS = ["yesterday", "last Saturday", "two days ago", "last week", "today"]
EN_FILLER = [
    "how was your weekend?", "work has been crazy this week, I barely slept", "the kids are driving me nuts lately",
    "did you watch the game last night?", "I made pasta for dinner again, nothing special", "the weather turned cold so fast",
    "we should grab coffee soon", "I'm so tired, this week felt like a month", "haha that's so true",
    "my mom called, she says hi", "I keep forgetting to water my plants", "traffic was terrible this morning",
    "that sounds like fun, tell me more", "oh no, I hope everything is okay",
    "we went to the park with the kids, nothing fancy", "I started reading a new book but it's slow",
    "my neighbour's dog barks all night", "I finally cleaned the garage", "the new cafe downtown is overpriced",
    "my brother is moving to another city", "I tried a new recipe, it was a disaster",
    "the school sent another note about the field trip", "we had friends over for dinner on Friday",
    "my back hurts from sitting all day", "I should really exercise more", "I'm proud of you, seriously",
    "let's plan something for next month", "my daughter wants a pet so badly", "the view from our balcony is nice in the evening",
    "{o}, that sounds amazing", "haha {o}, you always say that", "{o}, we really need to catch up properly",
    "yesterday was such a long day, I fell asleep on the couch", "last week flew by, I don't remember any of it",
    "today I just stayed in and did laundry", "two days ago the power went out for hours",
    "last Saturday we stayed home and watched movies",
]
ZH_TOPICS = [
    _topic("我们从救助站领养了一只{x}，孩子们给它起名叫豆豆", "{s}领养了什么狗？", "{s}家里新添了哪位四条腿的成员？",
           ["柯基", "柴犬", "金毛", "泰迪"], [
               ("self", "before", "我一直在网上看小狗，{y}真的好可爱"),
               ("other", "any", "我表妹从宠物店买了一只{y}，花了好多钱"),
               ("self", "after", "豆豆又把我的拖鞋咬坏了，养狗真不容易"),
               ("other", "after", "{s}，孩子们和新来的狗相处得怎么样？"),
               ("other", "any", "周日路过救助站，里面有好多流浪狗"),
               ("self", "before", "我们想给孩子养条狗，最近在研究品种"),
               ("other", "any", "邻居家新养了一只{y}小狗，整天叫"),
               ("self", "after", "带豆豆去打疫苗了，它特别乖"),
               ("other", "after", "{s}，发张小狗的照片给我看看！"),
               ("other", "any", "大家都说救助站的狗最懂事")]),
    _topic("我和哥哥终于爬上了{x}，风景太美了", "{s}去哪里爬山了？", "{s}和兄弟一起徒步登顶了哪里？",
           ["黄山", "泰山", "华山", "峨眉山"], [
               ("self", "before", "我哥一直叫我去爬山，也许今年夏天去{y}"),
               ("other", "any", "我同事去年爬了{y}，说山路特别难走"),
               ("self", "after", "爬完山腿到现在还疼，下山最累"),
               ("other", "after", "{s}，你哥在山顶拍照片了吗？"),
               ("other", "any", "我买了新的登山鞋，可是一次都没穿过"),
               ("self", "before", "想爬一座真正的大山，得先练练体力"),
               ("other", "any", "去我爸妈家路上经过{y}，看着好陡"),
               ("self", "after", "我哥下个月还想去爬另一座山，我有点犹豫"),
               ("other", "after", "{s}，爬山比你想的难吗？"),
               ("other", "any", "我不适合爬山，每次都迷路")]),
    _topic("我在二手市场花五十块买了一台{x}", "{s}在二手市场买了什么？", "{s}淘到了什么便宜的旧货？",
           ["老式收音机", "胶片相机", "缝纫机", "打字机"], [
               ("self", "before", "这个周末想去逛二手市场，不过我每次都空手回来"),
               ("other", "any", "我舅舅家里堆满了旧东西，还有一台{y}"),
               ("self", "after", "摊主说那是他爷爷留下的，谁知道真假"),
               ("other", "after", "{s}，你总能在市场上淘到好东西"),
               ("other", "any", "周日二手市场人特别多，我什么也没买"),
               ("self", "before", "你知道二手市场周末几点开门吗？"),
               ("other", "any", "我把家里那台旧{y}在网上便宜卖了"),
               ("self", "after", "我把它擦干净，摆在客厅的架子上了"),
               ("other", "after", "{s}，你跟摊主砍价了吗？"),
               ("other", "any", "现在店里的老物件都贵得离谱")]),
    _topic("下班以后我靠{x}放松，心情会好很多", "{s}下班后怎么放松？", "{s}工作结束后用什么方式解压？",
           ["练瑜伽", "弹古筝", "养花", "做陶艺"], [
               ("self", "any", "上了一天班，回家累坏了"),
               ("other", "any", "我姐说{y}最能放松，可我没那个耐心"),
               ("other", "any", "{s}，你每天加班，怎么扛得住的？"),
               ("self", "any", "工作压力太大了，晚上总是睡不着"),
               ("other", "any", "我也该找点爱好放松一下了"),
               ("self", "any", "医院缺人，我的班又变长了"),
               ("other", "any", "我试过一次{y}，比看起来难多了"),
               ("other", "any", "{s}，你最近看起来轻松多了"),
               ("self", "any", "下班以后我总是到半夜都睡不着"),
               ("other", "any", "我很难放松下来，脑子一直停不下来")]),
    _topic("我跑完了{x}半程马拉松，用时不到两小时", "{s}跑了哪个半程马拉松？", "{s}完成了哪场长距离比赛？",
           ["西湖", "滨江", "东湖", "太湖"], [
               ("self", "before", "我在准备半程马拉松，膝盖有点受不了"),
               ("other", "any", "我邻居跑了{y}全程马拉松，太厉害了"),
               ("self", "after", "奖牌还挂在冰箱上，成绩比我想的好"),
               ("other", "after", "{s}，今年还打算再跑一场比赛吗？"),
               ("other", "any", "我试过早上跑步，坚持了一个星期就放弃了"),
               ("self", "before", "我报名了一场比赛，现在真得开始练了"),
               ("other", "any", "周日{y}的比赛封了半个市中心的路"),
               ("self", "after", "比赛完两天都走不了路"),
               ("other", "after", "{s}，你最后的成绩是多少来着？"),
               ("other", "any", "跑马拉松的人真是另一个物种")]),
    _topic("女儿开始学{x}了，每天晚上都练习", "{s}的女儿开始学什么了？", "{s}家的小姑娘最近在学哪种乐器？",
           ["小提琴", "钢琴", "二胡", "琵琶"], [
               ("other", "any", "我儿子学了两个月{y}就不想学了"),
               ("self", "before", "女儿想学一门乐器，我也不知道选哪个"),
               ("self", "after", "学费挺贵的，不过她很喜欢老师"),
               ("other", "after", "{s}，你女儿快要有演出了吗？"),
               ("other", "any", "我小时候学过{y}，后来放弃了，现在很后悔"),
               ("other", "any", "我外甥女在学校乐团里学{y}"),
               ("self", "before", "女儿在电视上看了场音乐会，现在也想学"),
               ("self", "after", "练习的声音挺吵的，不过我很为她骄傲"),
               ("other", "after", "{s}，你女儿还喜欢上课吗？"),
               ("other", "any", "现在的音乐课学费太贵了")]),
    _topic("我们在{x}待了一个星期，吃了很多小吃", "{s}在哪个城市待了一个星期？", "{s}出门旅行去了哪里品尝美食？",
           ["成都", "西安", "厦门", "长沙"], [
               ("self", "before", "我们在考虑出去旅行，也许去{y}，还没定"),
               ("other", "any", "我朋友在{y}住了一个月，回来整个人都变了"),
               ("self", "after", "到现在还在想那边的小吃，胖了两公斤"),
               ("other", "after", "{s}，旅行带了什么纪念品回来？"),
               ("other", "any", "我真的需要放个假，去个好吃的地方"),
               ("self", "before", "最近一直在看机票，都好贵"),
               ("other", "any", "{y}一直在我的清单上，听说那边特别好吃"),
               ("self", "after", "那边的小吃是最棒的，还想再去"),
               ("other", "after", "{s}，这次旅行你最喜欢哪个地方？"),
               ("other", "any", "孩子出生以后我们就没出过远门")]),
    _topic("我报了社区大学的{x}课", "{s}报了什么课？", "{s}最近在进修学习什么新本领？",
           ["摄影", "书法", "日语", "烘焙"], [
               ("self", "before", "今年想学点新东西，还没想好学什么"),
               ("other", "any", "我老公以前报过{y}课，两个星期就不去了"),
               ("self", "after", "社区大学的老师很严格，不过教得很好"),
               ("other", "after", "{s}，上课怎么样，作业难不难？"),
               ("other", "any", "社区大学寄来了晚上的课程表"),
               ("self", "before", "社区大学有晚上的课，我有点心动"),
               ("other", "any", "我妹妹在中学教{y}"),
               ("self", "after", "这门课的第一次作业下周要交"),
               ("other", "after", "{s}，你还每周去上课吗？"),
               ("other", "any", "我总是报了课又坚持不下来")]),
]
ZH_DAYS = ["昨天", "前天", "上周", "今天", "三天前"]
ZH_FILLER = [
    "周末过得怎么样？", "这周工作太忙了，几乎没睡觉", "孩子们最近太闹了", "昨晚你看球赛了吗？", "晚饭又做了面条，没什么特别的",
    "天气一下子就变冷了", "我们改天一起喝咖啡吧", "好累啊，这一周像一个月那么长", "哈哈，说得太对了", "我妈打电话来，让我问你好",
    "我总是忘记给花浇水", "今天早上堵车太厉害了", "听起来很有意思，多说说", "哎呀，希望一切都好",
    "我们带孩子去公园转了转", "最近在看一本新书，但是有点慢", "邻居家的狗整晚叫", "终于把车库收拾干净了", "市中心新开的咖啡店太贵了",
    "我哥要搬去别的城市了", "试了一个新菜谱，结果失败了", "学校又发了春游的通知", "我们周五请朋友来家里吃饭",
    "最近在考虑换工作", "坐了一天，腰好疼", "我真该多运动运动", "我们下个月计划一下出去玩吧",
    "{o}，听起来太棒了", "哈哈{o}，你每次都这么说", "{o}，我们真该好好聚一聚了",
    "昨天累坏了，在沙发上就睡着了", "上周过得太快了，什么都不记得", "今天在家洗了一天衣服", "前天停电停了好几个小时",
]
