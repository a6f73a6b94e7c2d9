"""Look-alikes a later round of rules first took for secrets, each now left alone: the tune sets
13–24's harmless texts and the texts two reviews wrote against the new rules."""

from __future__ import annotations

import pytest

from memwarden.policies.secrets import find_secrets


@pytest.mark.parametrize(
    "text",
    [
        # ids, digests and public values where a credential is named nearby
        "invalid username or password. Trace ID: 3f0c1b7e-59c1-4a38-86be-2790f276ae48",
        "rotated the report user's password, new one is in 1Password under 'pg-prod-02 / reporting'",
        "室友把我的教务系统密码改了，学号是 20210344，现在登不上",
        "Request Method: GET\nStatus Code: 429 Too Many Requests\nx-trace: dc0babf419f5f73bbcb4e9714255064d",
        "users:\n- name: eks\n  user:\n    apiVersion: client.authentication.k8s.io/v1beta1",
        "Sage renewal done. Licence key will be emailed to fiona@shop.test, order ref SG-0098812.",
        "SHA-256 Fingerprint: A5:11:E2:79:1E:ED:49:8A:AB:BF:62:75:55:FA:F2:C1:FF:7E:06:2F:CE:EC:9B:60",
        "golang.org/x/net v0.21.0 h1:dbKF2o5sKq3OgA0VgnkjxtambDLv9v3TQopUjeobcQy=",
        '<div class="g-recaptcha" data-sitekey="6Lpc1_POZAhcoT-cegtfy2nVPQklsrSesI9k4jGV"></div>',
        'Public-Key-Pins: pin-sha256="qoSsMUPCcFXC5BFI3K3UqjFfOA1elKUGYVDnv9nI+mP="; max-age=5184000',
        "    certificate-authority-data: LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1JSUMzfTQaX99PPOwbLHvoQgUehPb0GNnek",
        "cookie: _ga=GA1.2.8782345183.3890664020; theme=dark; cookie_consent=1",
        # templates and marked examples
        'POST {{baseUrl}}/auth/login\n{"email": "{{email}}", "password": "{{password}}"}',
        "Example only: api_key = 'sk-test-EXAMPLE-DO-NOT-USE' (replace with your own)",
        # a verb, not a PIN; a Wi-Fi's name or state, not its password; years in a list
        "The `.tool-versions` file pins `nodejs 18.19.0` and `terraform 1.7.5` for the repo.",
        "the wifi is down again, rebooted the router twice",
        "the wifi is tplink2024 on the ground floor",
        "the guest wifi is called CafeGuest2024",
        "our wifi is fibre900 now, much faster",
        "passwords: rotated 2023, rotated 2024, next due 2025",
        # the second batch's look-alikes
        "Test user: demo@shop.test, password: demo (public sandbox, reset nightly).",
        "WARN jwt: token rejected for sub=u_50712 (kid=2024-05-rsa, alg=RS256, iss=https://auth.example)",
        "民宿host说door code会在check-in当天2pm短信发",
        "In .env set DB_PASSWORD=<your-db-password>; never commit the real one.",
        "店里wifi是开放的 不用密码 名字叫Cafe_Guest",
        "Checked the banned password list — 'P@ssw0rd' and company name variants are on it.",
        "PIN for the Teams phone? It's 'sign in from another device', the code changes every time.",
        "Hint for Mum's laptop password (her own hint): 'first dog + the street we lived on'.",
        "Idempotency-Key: 2d689045-f0a0-4b36-a840-f48f7eed570b — retrying is safe",
        "Host key fingerprint SHA256:q3L7fZ8mN0rV2tK6xB9wC1yD5hJ4gE8aP7sU0iO3nQ2 — check it first.",
        "Stripe publishable key for checkout: pk_live_51ENZDNNiHq3yZyMWjwsRQPYvfUn2cEnh8VkHvsk",
        "服务端证书指纹 SHA256：53:45:92:CA:9A:85:84:6D:BA:73:C0:F2:9B:40:D0:63:E9:64:62:02:7B:66",
        "# 提示输入密码时直接回车，默认没有密码",
        # the sixth round's look-alikes
        "the last four digits of the card are four three two one",
        "Caller: is the year nineteen eighty-four the PIN? no, it isn't.",
        "> Could you send me the PDF password?\n\nSorry, we only give that out by phone, please ring 0161 496 0731.",
        "验证码已发送至尾号3381的手机，请注意查收。",
        "示例：初始密码格式为“姓名拼音+工号”，如 zhangsan1001（仅为示例）。",
        "Training tip: a good passphrase is four unrelated words — something like 'teapot giraffe lantern moss'.",
        "保险柜密码只有店长和会计知道，交接班不交密码，只交钥匙，钥匙编号K-03",
        "体检报告查询密码默认是身份证后六位，身份证末尾是X的要用大写X",
        "tests/fixtures/settings.env:\nAPI_KEY=test-dummy-key-not-real\nAPI_SECRET=fake_secret_for_unit_tests",
        "Content-Security-Policy: script-src 'self' 'nonce-72Xpdn7r6SEFFWH2QDeM7w=='; object-src 'none'",
        'selector1._domainkey.shop.test. 3600 IN TXT "v=DKIM1; k=rsa; p=MIGfMA0GCSqGSIb3DQEBAQUAA4GNADCBiQKBgQrnIzVE8uDSkhTf"',
        '{"ETag": "\\"1f284dea8ebfbc08f3ffcf1b452ef38f\\"", "VersionId": "rpyfBjqny_AXDuslJPkQ7xWm2sL9dE4v"}',
    ],
)
def test_a_later_rounds_look_alikes_are_left_alone(text: str) -> None:
    assert find_secrets(text) == [], [(f.kind, text[f.start : f.end]) for f in find_secrets(text)]


@pytest.mark.parametrize(
    "text",
    [
        "密码格式是字母加数字 比如abc123这种 你可别真设成这个",
        "Staff handbook p.4: e.g. till PIN 1234 — EXAMPLE ONLY, you choose your own at induction.",
        "密码格式建议类似 Xxxx@2024xx（这只是格式示意，不是真实密码）",
        "订金 2000 元已到账，尾号 7788 的银行卡转入，交易流水号 3120240311884523。",
    ],
)
def test_an_example_of_a_format_and_a_transactions_number_are_not_secrets(text: str) -> None:
    assert find_secrets(text) == [], [(f.kind, text[f.start : f.end]) for f in find_secrets(text)]


# Found by a review of the latest rounds: look-alikes the new rules first took for secrets.
@pytest.mark.parametrize(
    "text",
    [
        "Monthly active logins: London 15320, Paris 12880, Berlin 9770",
        "Failed logins this week - Mon 1204, Tue 1877",
        "Gmail keeps marking this team list mail as spam again",
        "The wifi kept dropping; key takeaway: buy a mesh router",
        "The wifi at the cafe is 'Starbucks_5G'",
        "Logged in as guest using 'incognito' mode",
        '{"secretSanta": "Margaret", "password_policy": "min-12-chars"}',
        "QA plan: user testing / pass criteria agreed",
        "Booked the login workshop with sarah — Room-B12 at 3pm",
        "Key changes landed in commit: 9fceb02d0ae598e95dc970b74767f19372d61af8",
        "Key file checksum = d41d8cd98f00b204e9800998ecf8427e",
        "For me the most memorable place was Kyoto.",
        "Sophie's primary school is Oakfield — the office verified her place today.",
        "Called the helpline about Jack's primary school application; the answer was Brookfield.",
        "Rent is £450 p/w = 1950 pcm",
        "The new postcode has six digits: 560034",
        "My bus pass number is 00451239",
        "The thermostat override is 1800 until Friday",
        "Left the door open for the kids' countdown. 5 4 3 2 1!",
        "我家智能锁是 2023 款的，电子锁是 5588 型",
        "门禁卡丢了，物业说「补办要五十块」",
        "客服回复：银行卡的安全问题已经处理，回答是会全额退款",
        "银行柜台说安全问题的答案是你第一所小学的名字",
    ],
)
def test_what_a_review_of_the_latest_rules_took_for_secrets_is_left_alone(text: str) -> None:
    assert find_secrets(text) == [], [(f.kind, text[f.start : f.end]) for f in find_secrets(text)]


@pytest.mark.parametrize(
    "text",
    [
        "set the alarm to 0545 please",
        "Church hall alarm was changed after the break-in. Pat has the new code, ring her on 07700 915332.",
        "Lettings: vacant flat at 9 Queen St. Alarm is unset. Meter readings: elec 044182, gas 11873.",
        "Dad's alarm company is on 0800 731 2244 if it goes off again, account no. 55-0192",
        "Locksmith came, lock's changed, bill's a hundred and ten pounds, invoice number three three one eight.",
        "New D-lock, keys numbered 1 2 8 8 4 6 on the tag; spare at mine.",
        "The lock was installed in 2019 and the keypad has 12 buttons.",
        "民宿留言本：门锁密码入住当天发到手机，很方便。我们是三楼 302 房。",
        "工具房的锁换成钥匙锁了，钥匙放在 5 栋 1 单元 201 张阿姨家",
        "这款智能锁原价1599 双十一1299 送安装",
        "朋友做宠物医院连锁，基础版一年2999，专业版一年5999",
        "上个租客的密码我已经从锁里删了，他知道的那个2255没用了",
        # found by a second review: counts, sizes, prices, settings and addresses near a lock's word
        "The smart lock stores up to 100 fingerprints and 50 cards.",
        "A 4-digit padlock only has 10000 combinations, so it's not that secure.",
        "Our solar panels generated 3200 kWh last year.",
        "The new panel is a 2560 x 1440 screen with great colours.",
        "The keypad's battery is rated 2400 mAh and lasts a year.",
        "The alarm went off at 0545, 0600 and 0615 before I got up.",
        "Turn both dials to 200 and wait until the light goes off.",
        "The locksmith came out on Sunday and charged 120 for the callout.",
        "Left the parcel on the porch of 1420 Maple Avenue, by the keypad.",
        "The alarm grows as 1400 homes flood along the river.",
        "这把锁重 500 克，支持 200 组指纹，电池 2000 毫安。",
        "显示器面板分辨率是 2560×1440，色彩不错。",
        "闹钟（报警器）定在 0630，结果没响。",
        "他锁骨骨折了，医药费花了 3500 多块。",
    ],
)
def test_numbers_near_a_lock_that_open_nothing_are_left_alone(text: str) -> None:
    assert find_secrets(text) == [], [(f.kind, text[f.start : f.end]) for f in find_secrets(text)]


# An eighth round's look-alikes: a telephone number after a code was sent, a log's field named
# *_PASSWORD, a time said after "at", addresses as people make them up, rules a PIN must follow, a
# number said not to be one, a port, a hotline, the last digits of a card.
@pytest.mark.parametrize(
    "text",
    [
        "Verification code sent to +86 137****5521. Didn't get it? Resend in 60s.",
        "OTP sent to +1 (555) 014-2291, didn't arrive, pressed resend",
        "2025-04-02 09:14:55 WARN login failed for user=mli reason=BAD_PASSWORD attempts=4",
        "flight BA two nine one, gate C forty, boarding at ten fifteen, seat twelve A",
        "watch-only: xpub6Cm0lWq8Rk2ZpT4vYx9NbL3sJd7HfQ1gE5aU6oK2iP8rM4tC0wX3yV7nB9eJ5hG1sD2fA6kZ8, can't spend",
        "收款地址 TK9mXb2pL0vR7kN4wA6cY3dF1hJ5sG8eZq，波场链，别转错",
        "Your new PIN must be 6 digits and can't be sequential (123456) or repeated (999999).",
        "The number on the envelope wasn't a PIN at all, it was the dentist's reference, 31-442.",
        "测试环境 redis 没设密码，host 10.2.3.4 port 6379，只有内网能连",
        "【某银行】您的账户修改了登录密码，如非本人操作请致电95588。",
        "PIN reset requested for the card ending 7712",
        "個密碼唔係4321，你再試下",
        "the password is hard-to-guess now that IT changed the rules",
        "the wifi at the office is Guest-5G!",
        "My first pet was a hamster, I put him in a cage by the window.",
        "the backup code generator v2 is broken again",
        "curl -H 'X-API-Key: YOUR_API_KEY' https://api.example.com/v1/ping",
        "the token request id is 9a8b7c6d5e4f3a2b1c0d, please quote it",
        "I reset my password, it's fine now",
        "The admin panel moved, it's v2.3 now",
        "the code review took ages so 2024 was slow",
    ],
)
def test_an_eighth_rounds_look_alikes_are_left_alone(text: str) -> None:
    assert find_secrets(text) == [], [(f.kind, text[f.start : f.end]) for f in find_secrets(text)]


def test_an_error_code_after_a_password_error_is_not_the_password() -> None:
    assert find_secrets("登录失败：用户名或密码错误（错误码 10023）。") == []
    assert find_secrets("Login failed: wrong password (error 40113), try again later.") == []


# What a review of the eighth round's rules took for secrets (each a class of look-alike).
@pytest.mark.parametrize(
    "text",
    [
        "Gun safe delivery is scheduled for Tuesday between 1300 and 1500.",
        "The safe harbor clause is Section 230.",
        "It's a safe bet the bus is late again, route 171.",
        "The password manager is now 1Password8, fine.",
        "我把密码管理器换成了1Password8。",
        "The admin panel URL changed, it's now admin2.example.com.",
        "The login flow is now OAuth2, no more passwords.",
        "Your login streak: it's now 30days, keep it up!",
        "The shipping code is on the label, so 1Z999AA10123456784, track it on UPS.",
        "The flight code changed, so BA0117, gate 22.",
        "Tags: travel, beach, summer, family, ocean, sunset, island, holiday, photo, happy, friend, weekend.",
        "Spelling test: 1 cabin 2 camera 3 canal 4 cancel 5 candy 6 cannon 7 canoe 8 canvas 9 canyon 10 capable 11 capital 12 captain",
        "Backup code repo2024 is archived, use repo2025.",
        "The backup code is Python3, not a shell script.",
        "Favourite teacher answer in the yearbook: I wrote Mr Patel.",
        "The docs say: run /login username2 password to authenticate on the test server.",
        "The hotel wifi is terrible!!2 bars at most.",
        "The rcon port is 25575 and the rcon -p flag takes the password from env.",
        "Docs: walletpassphrase 'passphrase' timeout — unlocks the wallet for timeout seconds.",
        "MFA backup key: keep them safe with your 2 codes.",
        "Security question about my first car — I used google (ha) to find the model.",
        "The garage code 2580 won't work now, that's the old one.",
        "The key safe code was 3391 but now it's changed, the old one is dead.",
        "Password is case-sensitive-by-default per the docs.",
        "Set the password to whatevertheywantittobe, it's their account.",
    ],
)
def test_what_a_review_of_the_eighth_round_took_for_secrets_is_left_alone(text: str) -> None:
    assert find_secrets(text) == [], [(f.kind, text[f.start : f.end]) for f in find_secrets(text)]


def test_a_quoted_answer_of_spaces_does_not_break_the_reader() -> None:
    assert isinstance(find_secrets("Security question first pet — I put '   ' because I forgot"), list)


def test_a_value_worked_out_in_prose_ends_before_its_sentence_does() -> None:
    text = "the laptop password is the name of our first street and the number, so Larkspur1146."
    found = find_secrets(text)
    assert [text[f.start : f.end] for f in found] == ["Larkspur1146"]


# The old one's value after the new one was named ("新的找 IT 要，旧的 …"), an error's number.
@pytest.mark.parametrize(
    "text",
    [
        "办公室 wifi 密码改了，新的找 IT 要，旧的 Office-5G 那个已经失效",
        "行政：机房门禁已经换成人脸识别了，原来的密码 1357# 今天起作废",
        '网站报错："Invalid verification code"（错误码 40103），用户说明天再试',
        "The OTP screen said: invalid code, error 40113. Trying again tomorrow.",
    ],
)
def test_an_old_value_after_the_new_one_and_an_error_number_are_left_alone(text: str) -> None:
    assert find_secrets(text) == [], [(f.kind, text[f.start : f.end]) for f in find_secrets(text)]


@pytest.mark.parametrize(
    "text",
    [
        "The store opens with 2024 stock on Monday.",
        "The admin said the new one is v2.1, fine.",
        "my PIN is long, that's 12 digits",
        "The password policy changed, that's v2 now",
        "The admin console moved; that makes 3 moves this year.",
        # what a review of a wider version of these rules took for secrets
        "unlock cost is 750 gems per hero, 4 heroes, that makes 3000.",
        "Login page: migrated Bootstrap4 → Bootstrap5.",
        "Old admin laptop died, new one is RTX4090.",
        "The quiz opens with 1066.",
        "It's a small safe town; population 4500.",
        "The panel holds 4500 (watts peak) on a sunny day.",
        "alrm clock went off at 0545, 0600 and 0615.",
        "Password length 64, so 128.",
        "Error: DB_PASSWORD 'undefined' — check your .env file.",
        "GITHUB_TOKEN 'read-only' scope is enough for this workflow.",
        "Vault path for DB_PASSWORD 'secret/data/prod/db'.",
        "The POSTGRES_PASSWORD 'mysecretpassword' from the Docker docs is only for local use.",
    ],
)
def test_what_opens_with_a_year_or_is_the_new_version_is_left_alone(text: str) -> None:
    assert find_secrets(text) == [], [(f.kind, text[f.start : f.end]) for f in find_secrets(text)]


# Written against the ninth round's rules: what each new reading must not take for a secret.
@pytest.mark.parametrize(
    "text",
    [
        "next door's wifi name is 'Get Off My WiFi' 😂 not asking them",
        "enter 2024 on the website to see the calendar",
        "email me at bob@x.com, pass it on to Jan",
        "my login is sarah@gmail.com and p.s. call me later",
        "The recipe is the same as last time but with more sugar, so 250g total.",
        "Same as last year but with a raise, so 45000 a year",
        "My favourite team is Arsenal, and I said Wow when they won",
        "the security word is a thing banks use",
        "the code is still broken, now 3 errors",
        "订单确认码已发送到邮箱",
        "we have 1, 2, 3, 4 bedrooms and the door is red",
        "Locker numbers for the new starters: 31, 32 and 35. Bring your own padlocks.",
        "the last 4 digit of the card is on the receipt",
        "docs_index and cs_theory notes are in the shared drive",
        # a review's, against the round's first version
        "The bank wanted verification: mother's maiden name? Sorry, I couldn't remember it.",
        "first pet's name? Honestly, no idea.",
        "Same as last month but plus VAT, so 1240.",
        "Same as last year but bigger, so 45000.",
        "Mann–Whitney U: 1200  p: 0.0034, effect size r = 0.31",
        "Forward to ops@firm.com and pass Q3-2024 figures to finance.",
        "Email hr@firm.com, pass 2-night vouchers to the winners",
        "Enter 0930 at the gate log when you arrive.",
        "Enter 1700 on the door sign-out sheet",
        "Your code to confirm the booking is on the receipt (ref 48213).",
        "您的确认码为空，请联系客服 400 820 8820。",
        "请在确认码页面输入订单号 20231208 后提交。",
        "They asked for my favourite team at the pub quiz — I said Leeds and got it wrong.",
        "The old gate code, the one the gate keypad used, was 4471.",
        "Our old wifi password — the router password too — was Coral!Reef1.",
        "The old password, the admin password, was Coral!Reef1 before the reset.",
    ],
)
def test_the_ninth_rounds_look_alikes_are_left_alone(text: str) -> None:
    assert find_secrets(text) == [], [(f.kind, text[f.start : f.end]) for f in find_secrets(text)]


@pytest.mark.parametrize(
    "text",
    [
        "the wifi is Terrible today, key takeaway: restart the router",
        "our wifi is BTHub6",
        "the wifi is 'not working'",
        "email me at bob@example.com and Q3report2024 is attached",
        "contact bob@example.com, ref INV-2024-0042",
        "cc: anna@corp.example  2024-05-01",
        "Team accounts:\nSales – Q3-2024\nOps – Q4-2024",
        "The scoreboard says 102 998 visitors this year",
        "The bank statement says 120 000 dollars",
        "| Product | Code |\n|---|---|\n| Widget | 4812 |",
        "| Error | Code |\n|---|---|\n| Not found | 404 |",
        "Alarm unset with 2024 tickets processed",
        "Combination padlocks ordered: 20x Master Lock 1500iD, PO 88123, arrive Thursday.",
        "Username: <工号>  Password: <first login 自己设置>",
        "The new PIN has to be 4 digits and it won't let you use 1234 or four of the same number.",
        "the security answer is wrong, call the bank",
        "we sell padlocks at 4.99 each",
        # a review's, against the round's first version
        'Our wifi is "down again today"',
        "Guest wifi and password available at reception",
        "Office wifi / password managed by IT",
        "SSID: OfficeNet\nkey rotation schedule: quarterly",
        "the wifi is Starlink2024",
        "bob@vendor.com   INV-20931",
        "john.smith@acme.com   Room4B",
        "alice@corp.com | Floor3 | Building B",
        "Reply to ops@acme.io  Ticket42 opened",
        "kate@corp.com\t\tUS-East1",
        "Accounts list: kate@corp.com, Nov-2024 review!",
        "Passwords reset today\nalice – ticket#4412\nbob – ticket#4413",
        "Logins dashboard\nSessions: active=34\nErrors: 5xx=12",
        "Failed logins this week\nMonday – 42attempts\nTuesday – 17attempts",
        "My bank app shows 125 400.",
        "The Amazon listing says 129 999.",
        "Amazon tracking says 123 456 - arriving Tuesday",
        "Lockers 101-150 are on the second floor",
        "Safes sold: 1200 units in Q3",
        "Padlocks: 12 in stock, 4410 SKU",
        "| Alarm | Code |\n|---|---|\n| Smoke | 1001 |\n| Fire | 1002 |",
        "| Flight | Gate | Code |\n|---|---|---|\n| BA117 | B32 | 4411 |",
        "| Lock model | Code |\n|---|---|\n| Yale X | 256 |",
        "In Wordle today the secret word was CRANE",
        "Our code words for the project are Apollo and Gemini.",
    ],
)
def test_the_tenth_rounds_look_alikes_are_left_alone(text: str) -> None:
    assert find_secrets(text) == [], [(f.kind, text[f.start : f.end]) for f in find_secrets(text)]


@pytest.mark.parametrize(
    "text",
    [
        # a board's pins, not a PIN
        "PIN diagram: pins 1-8 are the inputs, pin 9 is ground, pin 16 VCC.",
        "ESP32 的 pin 4 接按钮，串口波特率设 115200。",
        "Wire the LED to pin 13 and the sensor to pins 2-3; baud 9600.",
        # a password said to be current, valid or locked, not given
        "Login failed for user 'ops' (code 28P01). Make sure the password in the vault is current.",
        "The admin password is locked until an admin resets it.",
        # a count after "so", a bracket after a quantity, a cheap 3-digit count in Chinese
        "密码改了，所以 2024 年的账单要重新下载。",
        "The panel makes 4400 (peak) on a clear day.",
        "密码锁坏了三个，换了新的",
        # what a review found the round's first version took for secrets
        "Link settings\nPassword protected: Enabled\nExpires: Never",
        "Share settings - password protected: Required",
        "Our wiki page is password protected: Internal.",
        "We'll text a 6-digit code to 07700 900123 - it expires in 10 min.",
        "Each 4-digit code ranges from 1000 to 9999.",
        "The product's 8-digit code 40170725 is printed on the box.",
        "Users get a 6-digit code, it's generated from TOTP with a 30 s step (RFC 6238).",
        "JST pins 1 2 3 (left to right)",
        "The 4-pin header: 1-2-3-4 (VCC GND TX RX).",
        "Solar panel strings 2-2-4 (east, south, west).",
        "Lock-in rates 3-6-12 (months).",
        "Alarm at 6-15 (Mon-Fri), 8-00 (weekends).",
        "The bank asked my mother's maiden name for verification, it's OK.",
        "Security question: first pet's name, it's Optional.",
        "Bank security question asked my first car, I set it to Private.",
        "客服说密保问题的答案填“身份证后六位”就行",
        "密保答案设为“字母+数字”组合",
        "密保问题旁边写了“请勿泄露”",
        "路由器密码改了，型号是小米的，即 AX3000。",
        "电脑开机密码忘了，所以送修了，工单号即 WO20241207。",
        "保险柜：三零一室",
        "密码锁：五零二室的门锁坏了",
        "保险柜：二二零伏供电",
        "Zoom code for the meeting room, 845 123 4567.",
    ],
)
def test_the_eleventh_rounds_look_alikes_are_left_alone(text: str) -> None:
    assert find_secrets(text) == [], [(f.kind, text[f.start : f.end]) for f in find_secrets(text)]
