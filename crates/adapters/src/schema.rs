//! Diesel's view of the tables created by `migrations/`; kept by hand, checked by adapter tests.

diesel::table! {
    organizations (id) {
        id -> Uuid,
        name -> Varchar,
        plugins_access_level -> Int2,
        created_at -> Timestamptz,
    }
}

diesel::table! {
    projects (id) {
        id -> Int4,
        organization_id -> Uuid,
        name -> Varchar,
        api_token -> Varchar,
        created_at -> Timestamptz,
    }
}

diesel::table! {
    users (id) {
        id -> Int4,
        uuid -> Uuid,
        email -> Varchar,
        first_name -> Varchar,
        last_name -> Varchar,
        distinct_id -> Varchar,
        is_active -> Bool,
        is_email_verified -> Bool,
        current_organization_id -> Nullable<Uuid>,
        current_project_id -> Nullable<Int4>,
        created_at -> Timestamptz,
    }
}

diesel::table! {
    organization_memberships (organization_id, user_id) {
        organization_id -> Uuid,
        user_id -> Int4,
        level -> Int2,
        joined_at -> Timestamptz,
    }
}

diesel::table! {
    personal_api_keys (id) {
        id -> Uuid,
        user_id -> Int4,
        label -> Varchar,
        secure_value -> Varchar,
        mask -> Varchar,
        scopes -> Array<Text>,
        scoped_teams -> Nullable<Array<Int4>>,
        scoped_organizations -> Nullable<Array<Text>>,
        created_at -> Timestamptz,
        last_used_at -> Nullable<Timestamptz>,
    }
}

diesel::joinable!(projects -> organizations (organization_id));
diesel::joinable!(organization_memberships -> organizations (organization_id));
diesel::joinable!(organization_memberships -> users (user_id));
diesel::joinable!(personal_api_keys -> users (user_id));

diesel::allow_tables_to_appear_in_same_query!(
    organizations,
    projects,
    users,
    organization_memberships,
    personal_api_keys,
);
