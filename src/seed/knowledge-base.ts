// Knowledge base (spec §2.6), pt-BR: the four menstrual-cycle phases, partner guidance, a story and a health disclaimer.
import type { KnowledgeBaseSeed } from "./types.js"

export const knowledgeBase: KnowledgeBaseSeed = {
  phases: {
    lua_nova: {
      name: "Lua Nova — Menstruação (aprox. dias 1 a 5)",
      physiology:
        "Quando não há gravidez, o corpo lúteo deixa de produzir hormônios e os níveis de estrogênio e progesterona caem. Sem esse suporte, a camada interna do útero (o endométrio) se desprende e é eliminada como sangramento menstrual, que costuma durar de 3 a 7 dias. Substâncias chamadas prostaglandinas fazem o útero se contrair, o que explica as cólicas. Ao mesmo tempo, o FSH (hormônio folículo-estimulante) começa a subir e estimula os ovários a preparar novos folículos para o próximo ciclo. A duração e a intensidade variam de pessoa para pessoa e de um ciclo para outro.",
      femaleSensations: {
        physical: [
          "Cólicas na parte baixa da barriga, que podem irradiar para a lombar ou as coxas",
          "Cansaço e sensação de peso no corpo",
          "Inchaço abdominal",
          "Dor de cabeça em algumas pessoas",
          "Alterações no intestino, como fezes mais soltas"
        ],
        emotional: [
          "Vontade de mais recolhimento e descanso",
          "Alívio para quem teve sintomas de TPM nos dias anteriores",
          "Sensibilidade maior em dias de dor ou cansaço"
        ],
        energy:
          "Geralmente mais baixa, sobretudo nos primeiros dois ou três dias; tende a voltar aos poucos conforme o sangramento diminui."
      },
      partnerGuidance: {
        do: [
          "Perguntar como ela está e o que ajudaria hoje, em vez de supor",
          "Assumir mais tarefas da casa e da rotina sem precisar ser pedido",
          "Oferecer conforto prático: bolsa de água morna, chá, uma refeição pronta, silêncio quando ela quiser",
          "Manter o carinho sem expectativa de sexo; intimidade só com desejo e consentimento dos dois",
          "Garantir que absorventes, coletor ou analgésicos de uso habitual estejam à mão, se ela quiser"
        ],
        avoid: [
          "Fazer piadas ou comentários de nojo sobre menstruação",
          'Minimizar a dor com frases como "não deve ser tão ruim"',
          "Pressionar por programas cansativos ou por relação sexual",
          "Automedicar ou sugerir remédios sem que ela peça"
        ],
        connection:
          "Presença calma e cuidado prático contam mais do que grandes gestos: um filme no sofá, uma conversa leve, respeito ao ritmo dela."
      },
      painScale: {
        min: 0,
        max: 10,
        typical: 4,
        description:
          'Na escala de 0 a 10, a cólica menstrual costuma ficar entre leve e moderada (em torno de 3 a 5), mais forte no primeiro ou segundo dia. Dor intensa (7 ou mais), que impede atividades do dia a dia, não melhora com analgésicos comuns, piora com o tempo ou vem com sangramento muito volumoso, febre ou desmaio, não é "normal" e deve ser avaliada por um médico — pode indicar condições como endometriose ou miomas.'
      }
    },
    lua_crescente: {
      name: "Lua Crescente — Fase Folicular (aprox. dias 6 a 13)",
      physiology:
        "Sob o estímulo do FSH, alguns folículos crescem nos ovários e um deles se torna dominante. Esse folículo produz cada vez mais estrogênio, que reconstrói e engrossa o endométrio depois da menstruação. O muco cervical começa a ficar mais úmido. A fase folicular tecnicamente começa no primeiro dia da menstruação e é a parte do ciclo que mais varia de duração, por isso ciclos entre 21 e 35 dias são considerados comuns em adultas.",
      femaleSensations: {
        physical: [
          "Mais disposição física e melhor qualidade de sono para muitas pessoas",
          "Pele e cabelo frequentemente com aspecto melhor",
          "Menos inchaço do que nos dias pré-menstruais",
          "Aumento gradual da lubrificação e do muco cervical"
        ],
        emotional: [
          "Humor mais estável e otimista",
          "Mais abertura para socializar e para novidades",
          "Mais foco e vontade de planejar"
        ],
        energy:
          "Em alta crescente: costuma ser uma boa fase para exercícios mais intensos, projetos e atividades em casal."
      },
      partnerGuidance: {
        do: [
          "Propor atividades juntos, deixando que ela escolha e ajuste o ritmo",
          "Aproveitar o bom momento para conversas sobre planos, finanças e divisão de tarefas",
          "Apoiar os projetos e treinos dela com interesse genuíno",
          "Lembrar que cada pessoa vive a fase de um jeito: observar e perguntar continua valendo"
        ],
        avoid: [
          "Tratar a disposição dela como obrigação de estar sempre disponível",
          'Acumular pedidos e tarefas para "aproveitar" a energia dela',
          'Comparar com outras fases em tom de cobrança ("por que você não é sempre assim?")'
        ],
        connection:
          "Fase boa para novidades a dois: um passeio diferente, cozinhar juntos, aprender algo novo — sempre com vontade dos dois."
      },
      painScale: {
        min: 0,
        max: 10,
        typical: 0,
        description:
          "Em geral sem dor (0 a 1 na escala de 0 a 10). Dor pélvica persistente nesta fase não é esperada e merece avaliação médica."
      }
    },
    lua_cheia: {
      name: "Lua Cheia — Ovulação (por volta do dia 14 em um ciclo de 28 dias)",
      physiology:
        "Quando o estrogênio atinge o pico, o cérebro libera uma onda de LH (hormônio luteinizante), e cerca de 24 a 36 horas depois o folículo dominante se rompe e libera o óvulo. O óvulo sobrevive de 12 a 24 horas, mas como os espermatozoides podem viver até 5 dias no corpo, a janela fértil dura cerca de 6 dias, terminando no dia da ovulação. O muco cervical fica transparente e elástico, parecido com clara de ovo. O dia exato da ovulação muda de pessoa para pessoa e de um ciclo para outro; em um ciclo de 28 dias ela ocorre por volta do dia 14, mas em ciclos mais longos ou mais curtos acontece em outro momento. Quem usa anticoncepcional hormonal geralmente não ovula.",
      femaleSensations: {
        physical: [
          "Muco cervical transparente e elástico",
          "Leve dor ou pontada de um lado do baixo ventre (dor do meio), que dura de minutos a algumas horas",
          "Possível aumento da libido",
          "Leve sensibilidade nos seios em algumas pessoas",
          "Pequeno aumento da temperatura corporal basal após a ovulação"
        ],
        emotional: [
          "Autoconfiança e sociabilidade em alta para muitas pessoas",
          "Maior desejo de proximidade e contato",
          "Comunicação mais fluida"
        ],
        energy: "Geralmente no auge do ciclo, com pico de disposição e de vontade de se conectar."
      },
      partnerGuidance: {
        do: [
          "Conversar abertamente sobre desejo e limites: mais libido não é consentimento automático",
          "Combinar com antecedência o método contraceptivo, ou o plano de tentar engravidar, e dividir essa responsabilidade",
          "Elogiar e demonstrar carinho de forma sincera",
          "Planejar encontros e momentos a dois"
        ],
        avoid: [
          "Presumir que ela sempre vai querer sexo nesta fase",
          "Deixar a contracepção apenas sob responsabilidade dela",
          "Usar aplicativos de ciclo como método contraceptivo sem orientação profissional"
        ],
        connection:
          "Um bom momento para intimidade emocional e física quando os dois querem: encontros, conversas longas, toque e atenção."
      },
      painScale: {
        min: 0,
        max: 10,
        typical: 1,
        description:
          "A maioria sente pouca ou nenhuma dor (0 a 2 na escala de 0 a 10). Algumas pessoas têm a dor do meio, leve e de um lado só. Dor forte e súbita no baixo ventre, com febre, tontura ou sangramento fora do esperado, exige atendimento médico imediato."
      }
    },
    lua_minguante: {
      name: "Lua Minguante — Fase Lútea e TPM (aprox. dias 15 a 28)",
      physiology:
        "Depois da ovulação, o folículo vazio vira o corpo lúteo, que produz progesterona (e também estrogênio). A progesterona deixa o endométrio mais espesso e nutrido, pronto para uma possível gravidez, e eleva levemente a temperatura do corpo. Essa fase costuma ser mais estável, durando de 10 a 16 dias. Se não há gravidez, o corpo lúteo regride, estrogênio e progesterona caem e começa uma nova menstruação. Essa queda hormonal está ligada aos sintomas da TPM (tensão pré-menstrual), que aparecem nos dias anteriores à menstruação e variam muito de intensidade entre as pessoas. Quando os sintomas emocionais são muito intensos e atrapalham a vida, pode se tratar de transtorno disfórico pré-menstrual (TDPM), que tem tratamento.",
      femaleSensations: {
        physical: [
          "Inchaço e retenção de líquidos",
          "Seios sensíveis ou doloridos",
          "Vontade de comer doces ou salgados",
          "Cansaço, sono mais leve ou mais sono",
          "Espinhas, dor de cabeça ou dor lombar em algumas pessoas"
        ],
        emotional: [
          "Irritabilidade ou menos paciência, principalmente nos últimos dias",
          "Oscilações de humor, tristeza ou ansiedade",
          "Maior sensibilidade a críticas e a estresse",
          "Vontade de mais introspecção e de uma rotina mais tranquila"
        ],
        energy: "Começa moderada e tende a cair na última semana antes da menstruação."
      },
      partnerGuidance: {
        do: [
          "Ouvir com atenção e validar o que ela sente, sem tentar resolver tudo na hora",
          "Reduzir a carga dela na rotina e evitar marcar compromissos desgastantes, se ela preferir",
          "Combinar em um momento calmo como ela prefere ser apoiada nesses dias",
          "Levar a sério sintomas intensos e apoiar a busca por ajuda profissional, se ela quiser"
        ],
        avoid: [
          'Desqualificar sentimentos ou discordâncias com "é só TPM"',
          "Fazer piadas sobre humor, fome ou corpo dela",
          "Adiar conversas importantes indefinidamente; apenas escolher juntos o melhor momento",
          "Levar para o lado pessoal cada dia de menos paciência, sem conversar depois"
        ],
        connection:
          "Paciência e acolhimento: um abraço, um ambiente tranquilo e a disposição de escutar fortalecem a confiança do casal."
      },
      painScale: {
        min: 0,
        max: 10,
        typical: 2,
        description:
          "Desconfortos leves a moderados (cerca de 1 a 4 na escala de 0 a 10), como seios doloridos, inchaço e dor lombar, são comuns nos dias pré-menstruais. Dor forte, ou sintomas emocionais que atrapalham o trabalho, os relacionamentos ou trazem pensamentos de autoagressão, devem ser levados a um médico ou profissional de saúde mental."
      }
    }
  },
  story: {
    title: "O calendário na porta da geladeira",
    quote:
      'A gente brigava sempre pelas mesmas coisas e não entendia por quê. Quando ele parou de adivinhar e passou a perguntar "como você está hoje e do que precisa?", e eu passei a contar o que sentia, nossas semanas mudaram. Não é sobre controlar o ciclo de ninguém; é sobre escutar.'
  },
  disclaimer:
    "Este conteúdo tem caráter exclusivamente educativo e informativo e não substitui consulta, diagnóstico ou tratamento médico. Cada corpo é único: a duração do ciclo, o momento da ovulação e a intensidade dos sintomas variam de pessoa para pessoa e de um ciclo para outro, e podem mudar com anticoncepcionais, gestação, amamentação, idade ou condições de saúde. Em caso de dor intensa, sangramento anormal, ciclos muito irregulares ou sofrimento emocional importante, procure um médico ou outro profissional de saúde."
}
