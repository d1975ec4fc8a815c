provider app {
    probe start(int a);
    /* this comment never ends
    probe stop();
};
