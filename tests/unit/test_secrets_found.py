"""Secrets a later round of writers found missed, each now found: kinds named in the tune sets
13–24 (small businesses, developers, Chinese services, dictated notes, a helpdesk, speech, office
documents, machines, a secret hidden in prose, an agent's notes) and what two reviews found the
exclusions hid."""

from __future__ import annotations

import pytest

from memwarden.policies.secrets import find_secrets, mask


# A later round of writers (tune sets 13–15): small businesses' e-mails and notes, developers in a
# hurry, Chinese customer service and shops. Each kind below was missed before its rule.
@pytest.mark.parametrize(
    ("text", "value"),
    [
        # a card with its expiry right after it; a misspelt or slashed password name; a passkey's digits
        ("Card details for the framing invoice: 4929 1234 5678 9012, 07/27, 114. Pay by Friday", "4929 1234 5678 9012"),
        ("Shopify admin p/w = Crumpet#Tea19", "Crumpet#Tea19"),
        ("the pasword for the shop tablet is Velvet-Fox 42", "Velvet-Fox"),
        ("temp pass Welcome-Nia-2025, change it at first login", "Welcome-Nia-2025"),
        ("Xbox parental passkey for the kids is 5 3 1 9", "5 3 1 9"),
        # one-time codes a few words on, or in two groups of three after a bare "code"
        ("OTP 来了 553 018，快点输", "553 018"),
        ("code's 228 410 from the text, hurry", "228 410"),
        ("银行动态口令牌显示 804 127，快输进去", "804 127"),
        ("刚才银行发了个 code 给我：771 204，你快点输进去", "771 204"),
        # codes of letters and digits: short, grouped, lower case after a colon, a keypad's letter key
        ("Steam guard code: 9KQ4T", "9KQ4T"),
        ("HMRC activation code in the post: 8HJ2 4PLX 7MWQ", "8HJ2 4PLX 7MWQ"),
        ("Exchange 2FA backup: KQ7M-PX3R-TN9W-BV2L", "KQ7M-PX3R-TN9W-BV2L"),
        ("Google Classroom join code: r7kx2qm (students only)", "r7kx2qm"),
        ("clubhouse keypad is now B5812 after the break-in", "B5812"),
        ("garage keypad 6-1-9-4-enter", "6-1-9-4"),
        ("Till manager override is 5521, refunds only", "5521"),
        ("检验报告查询码 K7Q2P9，凭这个在公众号看结果", "K7Q2P9"),
        # configuration said in prose or in code
        ("set redis requirepass to `Gravel-Moth-81` by hand", "Gravel-Moth-81"),
        ("{'PGHOST': 'db.internal', 'PGPASSWORD': 'sk1ff-Otter-9'}", "sk1ff-Otter-9"),
        ('signingConfigs { release { storePassword "Lamp0st-Rain!" } }', "Lamp0st-Rain!"),
        ('auth := smtp.PlainAuth("", "me@shop.test", "wxyz abcd qrst lmno", "smtp.gmail.com")', "wxyz abcd qrst lmno"),
        ("pgpass on the bastion: replica.internal:5432:*:reader:Ql9-harbor-x", "Ql9-harbor-x"),
        ("Azure resource key: 0a1b2c3d4e5f60718293a4b5c6d7e8f9", "0a1b2c3d4e5f60718293a4b5c6d7e8f9"),
        ("keepass master for the team db is Copper.Heron.Ninety.7", "Copper.Heron.Ninety.7"),
        # security answers: a memorable word given, a name with no "is", a caller's "she said"
        ("Caller verified. Memorable word given: Marigold.", "Marigold"),
        ("caller verified: mother's maiden name Adeyemi, ok to reset", "Adeyemi"),
        ("My bank's security question answer is Pickles, our first cat", "Pickles"),
        (
            "Rang the energy company for her. They asked her first school, she said Brookfield Primary",
            "Brookfield Primary",
        ),
        ("银行客服问安全问题，我报了母亲姓名“王淑芬”", "王淑芬"),
        ("密保答案三个：陈美玲 / 长沙 / 旺财", "陈美玲"),
        # a description, then the digits; a quoted watchword; a master code; a login pair by comma
        ("聯絡簿 App 密碼是他生日 0914，麻煩幫忙看", "0914"),
        ("到了门岗说口令，说「青山472」就放行", "青山472"),
        ("客人的保险箱锁了，万能码 6 6 1 0 2 8，用完复位", "6 6 1 0 2 8"),
        ("Bookkeeping login for the accountant: oakfarmshop, Harvest-Gold-58", "Harvest-Gold-58"),
        # locks: digits as the next sentence, dashed, after a key box; on a keypad, then confirmed
        ("Keys are in the lockbox on the railing. 7 3 1 6. Knock quietly.", "7 3 1 6"),
        ("Wine store key is in the combination box, 4-0-8-2, by the door", "4-0-8-2"),
        ("Estate agent 说钥匙盒 code 是房东生日 1123，看完放回去", "1123"),
        ("小区车库直接在键盘上输 5821 然后按确认", "5821"),
        ("Alarm: punch in 0451 and hit OFF, you have 30 sec", "0451"),
        # lists of PINs; what a Wi-Fi "is"
        ("my pins 💳 Barclays 3391 | Monzo 7720", "3391"),
        ("staff till logins - Priya 2218, Tom 6604", "6604"),
        ("the wifi at the cottage is hazelpickle42 all lowercase", "hazelpickle42"),
        ("the wifi at nan's is literally 'Toffee4Ever!!' lol", "Toffee4Ever!!"),
        # a second batch (tune sets 16–18: people's own notes, an IT helpdesk, Chinese everyday apps)
        ("The code to get into Maya's building is C3318, the lift is on the left", "C3318"),
        ("netbanking customer ID 58210394 and IPIN is Lotus@7731", "Lotus@7731"),
        ("bike lock 6203", "6203"),
        ("storage unit gate code is star 4 1 9 7 pound", "4 1 9 7"),
        ("landlord's keysafe: turn to 5, 2, 0, 9 and push down", "5, 2, 0, 9"),
        ("Apple ID for the iPad: kids.ipad@mail.test // Kiwi!Fruit2019", "Kiwi!Fruit2019"),
        ("Crunchyroll shared with my brother: user otakubros / pass Zoro_was_best_9", "Zoro_was_best_9"),
        ("vet clinic wifi for the waiting room: VetGuest, pass whiskersandtails", "whiskersandtails"),
        ("Mum, the code that just came through is 614082, type it in quick", "614082"),
        ("钉钉verification code 482915，五分钟内有效", "482915"),
        ("信用卡4392 2670 1185 9036 11/26 帮我订酒店", "4392 2670 1185 9036"),
        ("钥匙在门口密码盒里 密码盒0518 往下拨", "0518"),
        ("12306原来的密码登不上了 我重置成 Tl-6625wq 你先用着", "Tl-6625wq"),
        ("远程协助用向日葵，验证码 kx7m2p，麻烦现在连一下", "kx7m2p"),
        ("VPN的OTP种子给你 KQ4TM2LXNBVGC6DR 导进身份验证器就行", "KQ4TM2LXNBVGC6DR"),
        ("飞书admin的recovery codes：5kq2-8xlw / 7dnm-3pzr / 0vtc-9hfy 存好", "7dnm-3pzr"),
        (
            "save my OpenWeather key for the garden station: 8f3c91d2ab7e4460c5f1e9a2b7d03c6e",
            "8f3c91d2ab7e4460c5f1e9a2b7d03c6e",
        ),
        ("12306找回密码的密保问题：小学班主任姓名 答案王秀兰", "王秀兰"),
        (
            "For the bank's identity check, the question is mother's maiden name and the answer we set is Ferreira.",
            "Ferreira",
        ),
        ("Caller verified via security question — mother's maiden name 'Okonkwo', matches HR", "Okonkwo"),
        ("Okta recovery question for the ops account: first pet = Biscuit", "Biscuit"),
        ("RADIUS shared secret between the WLC and NPS: Radius!Sh4re-Kx2", "Radius!Sh4re-Kx2"),
        ("enable secret on the branch router is Cisc0Br@nch17, console the same", "Cisc0Br@nch17"),
        (
            "$cred = New-Object PSCredential('CORP\\svc', (ConvertTo-SecureString 'B@ckup-Nightly-93' -AsPlainText -Force))",
            "B@ckup-Nightly-93",
        ),
        ("Printer web page: logged in as admin with 'scanme2fold' so the wizard stops resetting", "scanme2fold"),
        ("if the backup fails, log on as CORP\\da-mwright (R1verb3nd&Co!) and restart it", "R1verb3nd&Co!"),
        ("SNMP community on the core switch is nmsR3ad0nly_fh, add it to PRTG", "nmsR3ad0nly_fh"),
        ("Staff SSID is KMH-Staff, key treefrog-copper-1987. Guests use the portal.", "treefrog-copper-1987"),
        ("her new password is her dog's name Pepper, then 55. So Pepper55.", "Pepper55"),
        ("ldapsearch -x -H ldaps://ldap.corp -w 'L3dger!Moss' '(uid=jdoe)'", "L3dger!Moss"),
        (
            "https://api.telegram.org/bot9224496987:AACVCQ6wW0_1dBQnXhkbB2fI9h3qLEAoH4t/sendMessage",
            "AACVCQ6wW0_1dBQnXhkbB2fI9h3qLEAoH4t",
        ),
        ("BitLocker recovery key: 416889-302456-119108-584221-060258-712943-255651-630718", "416889-302456"),
        ("把 staging 的 Redis requirepass 改成了 R3dis_Stg_7788，记得同步", "R3dis_Stg_7788"),
        (
            "production:\n  secret_key_base: 85c7535d1e5f9d2075f90ff89660fa3bf02bec801df6f36edd88d87b9a6db460",
            "85c7535d1e5f9d2075f90ff8",
        ),
        # a sixth round (tune sets 19–22: speech, office documents, machines' configs, Chinese everyday life)
        ("Caller: my PIN's like, forty-one, seventeen.", "forty-one, seventeen"),
        (
            "Agent: What's your telephone banking passcode?\nCaller: It's six... sixty-six, twelve, eighty.",
            "twelve, eighty",
        ),
        ("hotel safe, passports are in, code's seventeen ninety-one", "seventeen ninety-one"),
        ("Caller: PIN is double-four, double-one.", "double-four, double-one"),
        ("the gate code is for to won oh and then press pound", "for to won oh"),
        ("Agent: What's the code on your screen?\nCaller: A, F, seven, two, K, zero?", "A, F, seven, two, K, zero"),
        (
            "Agent: Read me the six digits in your authenticator app.\nCaller: Five oh three, eight one two.",
            "Five oh three, eight one two",
        ),
        (
            "Caller: okay the card's four nine one two, three three oh eight, five five six one, two oh four four. Expiry oh nine.",
            "five five six one",
        ),
        ("Caller: The answer to my security question is Pickles. Our first cat.", "Pickles"),
        (
            "Agent: For the last step, what's your primary school?\nCaller: St Bridget's.\nAgent: You're verified.",
            "St Bridget",
        ),
        (
            "Notes for the bank: security question 'mother's maiden name' = Tremaine, 'first school' = St Bede's.",
            "Tremaine",
        ),
        (
            "Portal password reset done. Your new one is Lantern-Orchard-552. Please change it today.",
            "Lantern-Orchard-552",
        ),
        ("Safe in the bursar's office: 31 - 07 - 52 (left, right, left).", "31 - 07 - 52"),
        ("use the keypad — 7 7 1 2 followed by the tick key", "7 7 1 2"),
        ("Bank just texted the code for today's BACS run: 492 017, can you approve", "492 017"),
        ("Adobe Sign access code: 7TQ-XX9-4B (sent separately)", "7TQ-XX9-4B"),
        ("Mum's online banking: customer number 40022918371, passnumber 73920.", "73920"),
        ("contractors ring reception for the daily barrier code. Today's is 3314.", "3314"),
        ("Voicemail: the Netflix password is chaichai, c-h-a-i twice, then 2019.", "chaichai"),
        ("For the Wi-Fi in the meeting room, network Orion-Conf, the key is starlight7 with a one.", "starlight7"),
        ("sudo htpasswd -cb /etc/apache2/.htpasswd reviewer 'Docs-Staging-2291'", "Docs-Staging-2291"),
        ("/etc/postfix/sasl_passwd:\n[smtp.relay.example]:587 relay@shop.test:Xm3!rT8qLz", "Xm3!rT8qLz"),
        ("etcdctl --endpoints=https://10.0.1.5:2379 --user root:Etcd-R00t-Maple get /registry", "Etcd-R00t-Maple"),
        ("listen stats\n  stats auth opsview:Hapr0xy-Stats!1", "Hapr0xy-Stats!1"),
        ("ldap_default_authtok_type = password\nldap_default_authtok = B1nd-Me-Softly!", "B1nd-Me-Softly!"),
        ("snmpd.conf still has:\nrwcommunity Mgmt-Rw-Quokka 10.0.0.0/8", "Mgmt-Rw-Quokka"),
        ("npm publish --otp=604217", "604217"),
        ("config/master.key → 99b0697eb9c87189078ff06fdbfac820 for the new box", "99b0697eb9c87189078ff06fdbfac820"),
        ("<AdministratorPassword>\n  <Value>Unatt3nd-Admin!</Value>\n</AdministratorPassword>", "Unatt3nd-Admin!"),
        ('variable "winrm_password" {\n  type = string\n  default = "P@cker-Win-2019!"\n}', "P@cker-Win-2019!"),
        ("报告查询的短信码来了：8 3 0 6，护士说三分钟内输", "8 3 0 6"),
        ("天台门电子锁4403，物业说不要外传", "4403"),
        ("保安先给了个临时开闸码ZQ6612，这周有效", "ZQ6612"),
        ("会所健身房储物柜我设的0529", "0529"),
        ("你爷爷说密码是洞洞拐拐两两，他当兵的时候就这么念", "洞洞拐拐两两"),
        ("代账小李：麻烦收一下验证码报给我\n客户：418 553", "418 553"),
        ("学校Wi-Fi SSID: SZXX-Staff，key: szxx@staff2024", "szxx@staff2024"),
        ("手机银行安全问题 母亲姓名 答案刘桂芝 客服问的时候就这么答", "刘桂芝"),
    ],
)
def test_a_later_rounds_kinds_are_found(text: str, value: str) -> None:
    found = find_secrets(text)
    assert found, text
    assert value not in mask(text, found)


# Found by a review of the latest rounds: secrets their first exclusions hid.
@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("我的密码是 Xk9#mPq2Lz 这种算强密码吗？", "Xk9#mPq2Lz"),
        ("服务器 root 密码 Xk9#mPq2Lz，别发到群里这类地方", "Xk9#mPq2Lz"),
        ("跟之前类似，新的wifi密码是 Home@2024x", "Home@2024x"),
        ("my password is Crashtestdummy42!", "Crashtestdummy42!"),
        ("The padlock on the shed is set to 1975", "1975"),
        ("银行卡号 6222 0212 3456 7890 128", "6222 0212 3456 7890 128"),
        ("VPN的2FA种子给你 KQ4TM2LXNBVGC6DR", "KQ4TM2LXNBVGC6DR"),
        ("HSBC memorable word is PAPAYA — they ask for three of its letters", "PAPAYA"),
        ("Staff Wi-Fi: SSID BM-Staff, key 7hG!q2Lp9vRw", "7hG!q2Lp9vRw"),
    ],
)
def test_what_a_review_found_the_latest_exclusions_hid_is_found(text: str, value: str) -> None:
    found = find_secrets(text)
    assert found, text
    assert value not in mask(text, found)


def test_a_speakers_false_starts_repeated_do_not_exhaust_the_reader() -> None:
    # a false start is read past once; thousands of them are not read recursively
    text = "The PIN is " + "sixty... " * 7000
    assert isinstance(find_secrets(text), list)


# A seventh round (tune sets 23–24: a secret hidden in prose; an agent's own notes): digits near what
# they open, a sentence apart from its name.
@pytest.mark.parametrize(
    ("text", "value"),
    [
        (
            "I moved the spare key. It's in the box by the bins, the one with the dials. Mum's birth month and year, 0361.",
            "0361",
        ),
        (
            "Reminder: the vestry alarm is a nuisance. The panel by the coat hooks wants 1-9-4-7 and then 'off'.",
            "1-9-4-7",
        ),
        ("The hall's key safe opens with the year the choir was founded — for those who forgot, 1974.", "1974"),
        ("Boiler man needed to get in, I gave him the key safe number (4 5 0 0).", "4 5 0 0"),
        ("The tin's got a little lock, you'd think it was decorative, the numbers are 5 5 2.", "5 5 2"),
        ("The greenhouse has a padlock now, four digit wheels. It's 1966, like the world cup.", "1966"),
        ("For the overnight, the door panel at the staff entrance is: star, 4, 4, 8, 1, hash.", "4, 4, 8, 1"),
        ("妈，楼下那个小键盘换了，新的是3916再按井号，别按错了。", "3916"),
        # a newer code after an old one in the same window: both are read, the old one then dropped
        ("Alarm: 1 2 3 4 won't work any more, it's now 5 6 7 8.", "5 6 7 8"),
    ],
)
def test_a_code_told_in_prose_is_found(text: str, value: str) -> None:
    found = find_secrets(text)
    assert found, text
    assert value not in mask(text, found)


# An eighth round (tune sets 25–27: gamers, crypto and smart homes; Chinese ops and offices; letters,
# wills and diaries): values worked out in prose, answers "I put", seed words listed, single backup
# codes, game servers' and wallets' command lines.
@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("The shed password is the dog's name and the house number, so Rufus27, capital R.", "Rufus27"),
        ("Gran's tablet unlocks with 240561 — she picked her wedding day.", "240561"),
        ("The PIN for the old Nokia is the bus number twice so 4848, don't laugh.", "4848"),
        ("I reset the NAS admin this morning, it's Copperfield_88 now.", "Copperfield_88"),
        ("Changed the garage computer's password like you said. It is now Tulip2024x instead.", "Tulip2024x"),
        ("The hotel safe lets you choose, so I went with 8302 because nobody guesses it.", "8302"),
        ("爷爷写给你：银行卡密码我不告诉别人，写给你备用：六位数，7 1 0 3 2 8。", "7 1 0 3 2 8"),
        ("Security question 'first school' on the pension site — I put Saint Anselm, capitals.", "Saint Anselm"),
        ("The 'memorable word' they made me set — I used lighthouse — is asked letter by letter.", "lighthouse"),
        ("密保问题“你父亲的名字”我填的是王建国，别忘了。", "王建国"),
        (
            "my metamask words, in order: pear, lamp, roof, bench, tiger, sail, over, upgrade, crane, limit, kiwi, salad",
            "lamp",
        ),
        (
            "wallet recovery words: 1 olive 2 cable 3 march 4 giant 5 vapor 6 cherry 7 unfold 8 quit 9 hawk 10 brush 11 shy 12 lunar",
            "giant",
        ),
        ("Discord 2FA backup code: 7hq2-k9zx-3mpw, keep it offline", "7hq2-k9zx-3mpw"),
        ("身份验证器备用密钥 K7QZ 4XPM 2RTA LW5J，换手机用", "K7QZ 4XPM 2RTA LW5J"),
        ("mcrcon -H 10.0.0.5 -P 25575 -p 'cr33perSw4mp' 'say hi'", "cr33perSw4mp"),
        ('bitcoin-cli walletpassphrase "amber-fox-river-19" 300', "amber-fox-river-19"),
        ("join the server and type /login Obsidian_Axe7 so AuthMe lets you in", "Obsidian_Axe7"),
        ("PASS oauth:z8k2m4q7x1v9t3b5n0w6y2c4r8", "z8k2m4q7x1v9t3b5n0w6y2c4r8"),
        ("WARN upstream: retry with basic auth etl_user:Harb0ur!Grey -> 200", "Harb0ur!Grey"),
        ("小程序 AppSecret 重置之后是 4f1c8e2a9b7d3c6e0a5f2b8d1e9c7a3f，记一下", "4f1c8e2a9b7d3c6e0a5f2b8d1e9c7a3f"),
        (
            "The account is mine and the password is copper-kettle-winter-lane, print what you need.",
            "copper-kettle-winter-lane",
        ),
        ("set the password to marmaladesandwiches so the kids can remember it", "marmaladesandwiches"),
        ("the router admin password I set yesterday is Badger&Jam62, the old one was admin", "Badger&Jam62"),
        ("the wifi at the caravan is SeaBreeze!!77 — capital S and B", "SeaBreeze!!77"),
        ("公司邮箱密码重置了，新的是 Hong#2026autumn，登录后改掉。", "Hong#2026autumn"),
        # changed, and the old one mentioned after it: the new one is still the value
        ("Your console PIN is 3071 now — I changed it since your sister guessed the old one.", "3071"),
        ("家长模式的 PIN 是 5150，之前那个被猜出来了所以换了", "5150"),
    ],
)
def test_an_eighth_rounds_secrets_are_found(text: str, value: str) -> None:
    found = find_secrets(text)
    assert found, text
    assert value not in mask(text, found)


# What the same review found the new looks missed, or cut short.
@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("use this one, T8fK2mQ9xZ7vL4pW1nB6cR3dY5sH0jGk2a", "T8fK2mQ9xZ7vL4pW1nB6cR3dY5sH0jGk2a"),
        ("PIN 1379** (bold typo)", "1379"),
        ("The laptop login is the dog's name then the year we got him, so Pepper2017!", "Pepper2017"),
        ("Changed the router admin after the break-in, it's now Tangerine#88 — tell nobody.", "Tangerine#88"),
        ("Recovery code for Bitwarden: 7F3K9-2MQXP-8LZ4R-W1VN6-H5TYJ-C0DBA", "7F3K9-2MQXP-8LZ4R-W1VN6-H5TYJ-C0DBA"),
        ("My Authy backup key: ABCD 2EFG HIJK 3LMN", "ABCD 2EFG HIJK 3LMN"),
        ("Basic auth for the grafana box: viewer:Gr4f4na!View", "Gr4f4na!View"),
        ("mcrcon -H 10.0.0.5 -P 25575 -p 'Nether Portal 77' 'say hi'", "Nether Portal 77"),
        ("wifi是 Rainy#Day2024", "Rainy#Day2024"),
        ("Wi-Fi is now Sunny@Balcony9", "Sunny@Balcony9"),
        ("The recovery question was my first car; I typed Corsa Blue as the answer.", "Corsa Blue"),
    ],
)
def test_what_a_review_found_the_eighth_rounds_looks_missed_is_found(text: str, value: str) -> None:
    found = find_secrets(text)
    assert found, text
    assert value not in mask(text, found)


def test_a_new_value_after_the_old_one_is_said_to_be_gone_is_found() -> None:
    text = "new door code, the old one is gone: 4471"
    assert "4471" not in mask(text, find_secrets(text))


# The round's last look at the older tune sets' misses: "alrm" written short, a setting's name and
# its quoted value in prose.
@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("alrm 7-3-0-2, dsrm within 30s", "7-3-0-2"),
        ("Alrm cd @ unit 4 = 7730 then tick. Unset w/ same.", "7730"),
        ("Checked the config: DB_PASSWORD 'Wq7!zPm3Kx' looks right, host is wrong", "Wq7!zPm3Kx"),
        ("MYSQL_ROOT_PASSWORD 'Quokka!Fern88' for the dev db.", "Quokka!Fern88"),
        ("DJANGO_SECRET_KEY 'k9Lm2-Qz7pWv88' in settings.py", "k9Lm2-Qz7pWv88"),
    ],
)
def test_a_short_alarm_and_a_settings_quoted_value_are_found(text: str, value: str) -> None:
    found = find_secrets(text)
    assert found, text
    assert value not in mask(text, found)


# A ninth round (tune sets 28–30: agencies and schools, travel and hospitality, health and money):
# each kind below was missed before its rule.
@pytest.mark.parametrize(
    ("text", "value"),
    [
        # a filler between "is" and the value
        ("the password is literally BrightPath (no numbers). I know.", "BrightPath"),
        ("The override password for the Omnicell is still 'rx4north' lowercase.", "rx4north"),
        ("Gate code for the site has changed. It's now #1964 followed by the bell icon.", "1964"),
        # the new one, said first in its sentence; a keypad's digits and where they are keyed
        ("Luggage room code changed after the incident. New: 8 0 4 7 *. Night staff only.", "8 0 4 7"),
        ("When you reach the garage, punch in 7 3 3 1 on the keypad by the ramp.", "7 3 3 1"),
        # a login and its password, by "u:"/"p:", "login is … and pass is …", an address then "pass"
        ("Staff portal — u: j.mendes  p: Coral!Reef2", "Coral!Reef2"),
        ("my login is nadia.b@gmail.com and pass is nadiabakes<3 lowercase", "nadiabakes<3"),
        ("Google login for the tours Instagram: tours.sunset@gmail.com, pass SunsetBoat!9", "SunsetBoat!9"),
        # one value worked out from another
        (
            "It's the same as the Mailchimp one but with a 9 at the end. Mailchimp is Orchard!Lane so this one is Orchard!Lane9.",
            "Orchard!Lane9",
        ),
        ("Lockers need the new code from Monday — it's the same as before but with a 9 on the end, so 44819.", "44819"),
        (
            "Same as the wifi, just add the flat number: wifi is sunnyside and you're in 4, so sunnyside4 for the garage too.",
            "sunnyside4",
        ),
        # a security word; answers said ("I said …"), set for a question, after the question's "?'"
        ("Security check: 'What street did you grow up on?' — Albemarle Road.", "Albemarle Road"),
        ("Security word on Dad's Barclays account is 'marmalade'. They ask for three letters.", "marmalade"),
        ("'Mother's maiden name?' she asked, and I said Kowalczyk, and they let me change the flight.", "Kowalczyk"),
        (
            "They asked my security answer (favourite teacher) — I said Mr Abernathy and they unblocked the card.",
            "Abernathy",
        ),
        ("Confirming your identity: the answer you set for 'city where you were born' is Porto, correct?", "Porto"),
        ("Security answer for the registrar: 'What street did you grow up on?' — Albemarle Road.", "Albemarle Road"),
        # one-time codes: named by what they verify, read out with pauses, in spaced groups
        ("Your code to verify the change of seat is 9 1 8 2 7 3.", "9 1 8 2 7 3"),
        (
            "Rep: I'll need the telephone banking passcode.\nCaller: Uh, it's six... two... six... nine... zero... one.",
            "nine",
        ),
        (
            '"okay the code they just texted me is, uh, four four one... nine zero six. Can you put that in?"',
            "nine zero six",
        ),
        ("The OTP is 5 5 0, 1 8 2.", "1 8 2"),
        ("Bus depot lockers, bay 2: code is eight eight two six.", "eight eight two six"),
        # a vendor's keys; a password after another network said to need none
        (
            "woocommerce keys: ck_7a2f9e1c4b8d3a6f0e5c9b2d7a1f4e8c3b6d0a9f",
            "ck_7a2f9e1c4b8d3a6f0e5c9b2d7a1f4e8c3b6d0a9f",
        ),
        ("医院访客WiFi不用密码，员工网 HIS-Staff 的密码是 yihu2024xinnian ，全小写。", "yihu2024xinnian"),
        ("No password needed for guests; the staff password is Coral!Reef2", "Coral!Reef2"),
    ],
)
def test_a_ninth_rounds_secrets_are_found(text: str, value: str) -> None:
    found = find_secrets(text)
    assert found, text
    assert value not in mask(text, found)


@pytest.mark.parametrize(
    ("text", "value"),
    [
        # a Wi-Fi's key beside its network; a key's emoji
        ("Wifi: WH-Floor / key: forkl1ft!Blue", "forkl1ft!Blue"),
        ("Wi-Fi for your visit: network BRC-Audit, key 7Gf2-pQ9x-Lm3v (expires Friday).", "7Gf2-pQ9x-Lm3v"),
        ("the wifi at the lodge is 'Pinecone' and the key is marmot-hollow-88.", "marmot-hollow-88"),
        ("家里 WiFi\nSSID: ChenHome\nKey: chen-jia-2021-home\n", "chen-jia-2021-home"),
        ("new wifi \U0001f511 Heron&Lake42", "Heron&Lake42"),
        # an account's password right after its address
        ("just sign in with maya.k@example.org and Kettle!Drum7 on the tablet", "Kettle!Drum7"),
        ("STREAMING   dad.accounts@example.net   pelican742", "pelican742"),
        ("portal acct ops@depot.example pass Gr8!Harbour", "Gr8!Harbour"),
        # a code word, a security answer, a secret word
        ("The codeword is OSPREY.", "OSPREY"),
        ("the security answer is 'Marigold' (first pony)", "Marigold"),
        # a list of logins under its heading
        ("Grandad's logins\nEmail – Thistle!1948\nBank – Thistle1948bk", "Thistle!1948"),
        # a one-time code read off a message
        ("The bank sent a text to my phone. It says 402 771.", "402 771"),
        ("Apple 发来一个 code，写着 815 204，你要这个吗", "815 204"),
        ("Your OTP came through. The one in your texts is 660 913.", "660 913"),
        # a column of codes beside what they open; a cage; an alarm disarmed
        ("| Door | Code |\n|---|---|\n| Loading bay | 5521# |\n| Server room | 7802 |", "7802"),
        ("the code for the tool cage is, let me just say it, four one one four.", "four one one four"),
        ("05:55 Arrived. Disarmed with 7-3-0-9.\n06:05 Gates open.", "7-3-0-9"),
    ],
)
def test_a_tenth_rounds_secrets_are_found(text: str, value: str) -> None:
    found = find_secrets(text)
    assert found, text
    assert value not in mask(text, found)


@pytest.mark.parametrize(
    ("text", "value"),
    [
        # a one-time code named by its length; a code named with what it opens after it
        ("the courier app sent a 6-digit code to my phone, it's 551903 - quick", "551903"),
        ("Reception gave us one code for the bike room, 7 1 4 2.", "7 1 4 2"),
        # a lock's digits with a bracket after them; a padlock's three in Chinese numerals
        ("Allotment shed lock is 2-9-0-4 (our house number twice).", "2-9-0-4"),
        ("车棚那把密码锁：六一八，别告诉外人", "六一八"),
        # a dial turned left and right, in Chinese
        ("档案室保险柜：先向右转到二十一，再向左转到六，最后向右转到四十", "先向右转到二十一"),
        # "password protected:" and its value; a passphrase and how it is written, in Chinese
        ("The shared album is password protected: LanternFestival. Ask before sharing.", "LanternFestival"),
        ("集群那个 key 的 passphrase 是 quietharbour，全小写", "quietharbour"),
        # worked out, then given after 即 / 所以就是
        ("压缩包解压密码是项目编号加年份，即 PX0422025。", "PX0422025"),
        # a security answer: "it's …" after the question, what someone set it to
        ("If the helpline asks for my first school, it's Oakfield.", "Oakfield"),
        ("Recovery question is mother's maiden name - we set it to Harrowgate so use that.", "Harrowgate"),
        ("网银的密保问题答案填“刘老师”，三个字", "刘老师"),
        # what a review found the round's first exclusions hid
        ("My debit card PIN number 4 5 6 7.", "4 5 6 7"),
        ("Kids' PINs 12-34 and 56-78", "12-34"),
        ("Your 6-digit code is 492 017.", "492 017"),
        ("my 4-digit PIN 4471 for the card", "4471"),
    ],
)
def test_an_eleventh_rounds_secrets_are_found(text: str, value: str) -> None:
    found = find_secrets(text)
    assert found, text
    assert value not in mask(text, found)
